// The shipped catalog is complete and dated; user files override it entry by entry.
#include <gtest/gtest.h>

#include <fstream>

#include "library/catalog.h"
#include "plan/calibration.h"
#include "plan/format.h"
#include "plan/pipeline_spec.h"
#include "plan/planner.h"
#include "plan_test_util.h"
#include "util/error.h"

using namespace framelift::plan;
using nlohmann::json;

TEST(PlanCatalog, ShipsEveryDeviceOfTheIssueWithItsFigures) {
  const PlanCatalog c = PlanCatalog::load_default();
  for (const char* id : {"rtx3080", "rtx3090", "rtx4080", "rtx4090", "a40", "rtx-a5000", "rtx6000-ada", "l4", "l40s",
                         "a10g", "a100-40gb", "a100-80gb", "h100", "h200"}) {
    const Device* d = c.device(id);
    ASSERT_TRUE(d) << id;
    EXPECT_GT(d->memory_gb, 0) << id;
    EXPECT_GT(d->fp16_tensor_tflops, d->fp32_tflops * 0.9) << id;
  }
  // The datacenter Ampere/Hopper parts have no encoder.
  for (const char* id : {"a100-40gb", "a100-80gb", "h100", "h200"}) EXPECT_EQ(c.device(id)->nvenc, 0) << id;
  EXPECT_TRUE(c.device("l4")->av1_encode);
  EXPECT_FALSE(c.device("a40")->av1_encode);
  for (const char* p : {"runpod", "vast", "lambda", "vultr", "aws", "gcp", "azure", "coreweave"}) EXPECT_TRUE(c.provider(p)) << p;
  ASSERT_EQ(c.as_of().size(), 2u);
}

TEST(PlanCatalog, UserFileOverridesFieldsAndAddsEntries) {
  json base{{"as_of", "2025-01-01"},
            {"gpus", {framelift::plan::testing::gpu("g", 24, 100)}},
            {"providers", {framelift::plan::testing::provider("p")}},
            {"offers", {framelift::plan::testing::offer("p", "g", 1.0, 0.5)}}};
  json user{{"gpus", {{{"id", "g"}, {"memory_gb", 48}}, framelift::plan::testing::gpu("new", 16, 50)}},
            {"offers", {{{"provider", "p"}, {"gpu", "g"}, {"on_demand", 0.8}}, framelift::plan::testing::offer("p", "new", 0.3)}}};
  const PlanCatalog c = PlanCatalog::from_json({base, user}, {"base", "user"});
  EXPECT_EQ(c.device("g")->memory_gb, 48);
  EXPECT_EQ(c.device("g")->fp16_tensor_tflops, 100);  // left out: kept
  ASSERT_EQ(c.offers().size(), 2u);
  EXPECT_EQ(c.offers()[0].on_demand, 0.8);
  EXPECT_EQ(c.offers()[0].spot, 0.5);
  EXPECT_TRUE(c.device("new"));
}

TEST(PlanCatalog, ErrorsNameTheFileAndTheEntry) {
  json bad{{"providers", {framelift::plan::testing::provider("p")}},
           {"offers", {framelift::plan::testing::offer("p", "ghost", 1.0)}}};
  try {
    PlanCatalog::from_json({bad}, {"mine.json"});
    FAIL();
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("mine.json: offer p/ghost"), std::string::npos) << e.what();
  }
  EXPECT_THROW(PlanCatalog::load({"/nonexistent/catalog.json"}), framelift::Error);
}

TEST(PlanCatalog, LocalCpuHasCoresAndMemory) {
  const Device d = local_cpu();
  EXPECT_TRUE(d.cpu);
  EXPECT_GE(d.cores, 1);
  EXPECT_GT(d.memory_gb, 0);
  EXPECT_GT(d.fp32_tflops, 0);
  EXPECT_EQ(d.nvenc, 0);
}

TEST(Calibration, AManifestRunMakesThePlannerPredictItsTime) {
  const PlanCatalog c = PlanCatalog::load_default();
  json m{{"schema", 1}, {"kind", "framelift-profile"}, {"device", {{"id", "rtx4090"}}}, {"precision", "fp16"},
         {"runs", {{{"arch", "srvgg_compact"}, {"scale", 4}, {"input_width", 1920}, {"input_height", 1080},
                    {"seconds", 0.05}, {"peak_activation_bytes", 3e9}}}},
         {"encoders", {{{"codec", "libx265"}, {"preset", "medium"}, {"width", 1920}, {"height", 1080}, {"fps", 20}, {"threads", 8}}}}};
  Calibration cal;
  cal.add_manifest(m, "m.json", c);
  Job j = framelift::plan::testing::job_1080p({framelift::plan::testing::upscale("srvgg_compact", 4)});
  const auto e = estimate_device(j, *c.device("rtx4090"), 16, {}, cal);
  EXPECT_EQ(e.tile, 0);  // whole 1080p frames fit in 24 GB
  EXPECT_NEAR(e.gpu_s_per_frame, 0.05, 1e-6);
  EXPECT_NEAR(cal.encoder_mpx_per_thread("libx265", "medium"), 1920 * 1080 * 20 / 1e6 / 8, 1e-9);
  EXPECT_THROW(cal.add_manifest(json{{"kind", "other"}}, "x.json", c), framelift::Error);
}

TEST(PipelineSpec, CatalogModelsResolveToTheirNetworks) {
  const auto models = framelift::library::Catalog::load_default();
  const InputShape in{1920, 1080, 24};
  auto stages = plan_stages({{"upscale", {{"model", "realesr-animevideov3-x2"}}, {}}, {"interpolate", {{"fps", "60"}, {"factor", "2"}, {"model", "rife-v4.6"}}, {}}},
                            models, in);
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].cost.arch, "srvgg_compact");
  EXPECT_EQ(stages[0].cost.scale, 4);  // the ncnn x2 runs the x4 network
  EXPECT_EQ(stages[0].scale, 2);
  EXPECT_EQ(stages[1].cost.arch, "rife");
  EXPECT_EQ(stages[1].frame_factor, 3);
  EXPECT_EQ(plan_stages({{"upscale", {{"model", "realesrgan-x4plus-anime"}}, {}}}, models, in)[0].cost.macs_per_px,
            framelift::arch::cost("rrdbnet", 4, {{"nb", 6}}).macs_per_px);
  EXPECT_EQ(plan_stages({{"resize", {{"w", "960"}}, {}}}, models, in)[0].scale, 0.5);
  EXPECT_THROW(plan_stages({{"upscale", {{"model", "realesrgan-x4plsu"}}, {}}}, models, in), framelift::Error);
}

// What `run` takes, the planner takes: denoise levels become the family's model, a detected
// model file its architecture, and stages without a cost model are kept and flagged. The options
// come as api::plan_stages_for gives them, with the schema's defaults filled in.
TEST(PipelineSpec, EveryStageRunTakesIsPlannedNoneRefused) {
  const auto models = framelift::library::Catalog::load_default();
  const InputShape in{1280, 720, 25};
  const auto denoise = plan_stages({{"denoise", {{"level", "3"}, {"method", "waifu2x"}, {"scale", "1"}, {"arch", "cunet"}}, {}}}, models, in);
  EXPECT_EQ(denoise[0].model, "waifu2x-cunet-noise3");
  EXPECT_TRUE(denoise[0].priced);
  EXPECT_EQ(denoise[0].cost.arch, "waifu2x_cunet");
  // Level 0 and strength 0, which run takes, are planned too.
  EXPECT_EQ(plan_stages({{"denoise", {{"strength", "0"}, {"level", "2"}, {"method", "waifu2x"}, {"scale", "1"}, {"arch", "cunet"}}, {}}}, models, in)[0].model, "waifu2x-cunet-noise0");
  EXPECT_EQ(plan_stages({{"denoise", {{"level", "0"}, {"method", "waifu2x"}, {"scale", "1"}, {"arch", "cunet"}}, {}}}, models, in)[0].model, "waifu2x-cunet-noise0");
  DetectedNetwork rrdb{"rrdbnet", 4, {{"nb", 23}}, "4x_custom.pth"};
  const auto file = plan_stages({{"upscale", {{"model", "/m/4x_custom.pth"}}, rrdb}}, models, in);
  EXPECT_EQ(file[0].model, "4x_custom.pth");
  EXPECT_EQ(file[0].cost.macs_per_px, framelift::arch::cost("rrdbnet", 4, {{"nb", 23}}).macs_per_px);
  EXPECT_EQ(file[0].scale, 4);
  const auto free = plan_stages({{"filter", {{"graph", "hqdn3d=4,unsharp"}}, {}},
                                 {"deinterlace", {{"mode", "field"}}, {}},
                                 {"model", {{"file", "inpaint.pt"}, {"scale", "1"}}, {}},
                                 {"upscale", {{"model", "/m/x.param"}}, DetectedNetwork{"unknown", 1, {}, "x.param"}}},
                                models, in);
  ASSERT_EQ(free.size(), 4u);
  for (const auto& s : free) EXPECT_FALSE(s.priced) << s.model;
  EXPECT_EQ(free[1].frame_factor, 2);  // fields become frames
}

TEST(PipelineSpec, UpstreamOnlyModelsArePricedByTheirCatalogHyperparameters) {
  // SwinIR-L (embed 240, 9 groups, nearest+conv, 3conv) is not installed anywhere here: the
  // catalog's hyperparameters give the planner its network, not the architecture's defaults.
  const auto catalog = framelift::library::Catalog::load_default();
  const auto* large = catalog.find("swinir-l-x4-realsr-gan");
  ASSERT_NE(large, nullptr);
  const StageSpec s = stage_for_model(*large);
  const framelift::arch::ArchCost expected =
      framelift::arch::cost("swinir", 4, {{"embed_dim", 240}, {"layers", 9}, {"depth", 6}, {"heads", 8}, {"window_size", 8},
                                          {"mlp_hidden", 480}, {"upsampler", 3}, {"num_feat", 64}, {"three_conv", 1}});
  EXPECT_EQ(s.cost.macs_per_px, expected.macs_per_px);
  EXPECT_GT(s.cost.macs_per_px, 1.5 * framelift::arch::cost("swinir", 4).macs_per_px);
  // The hyperparameters that used to be special cases in code come from the catalog too.
  EXPECT_EQ(stage_for_model(*catalog.find("realesrgan-x4plus-anime")).cost.macs_per_px,
            framelift::arch::cost("rrdbnet", 4, {{"nb", 6}}).macs_per_px);
}

TEST(PipelineSpec, EveryCatalogModelHasACostModel) {
  // The catalog outlives the loop: a range over load_default().models() dangles (the temporary dies
  // before the body runs), which read garbage names once models carried hyperparameters.
  const auto catalog = framelift::library::Catalog::load_default();
  for (const auto& m : catalog.models()) EXPECT_NO_THROW(stage_for_model(m)) << m.name;
}

TEST(Format, Durations) {
  EXPECT_EQ(parse_duration("2h", "--deadline"), 7200);
  EXPECT_EQ(parse_duration("1h30m", "--deadline"), 5400);
  EXPECT_EQ(parse_duration("90", "--deadline"), 90);
  EXPECT_EQ(parse_duration("1.5h", "--deadline"), 5400);
  EXPECT_THROW(parse_duration("soon", "--deadline"), framelift::Error);
  EXPECT_EQ(human_duration(5400), "1h30m");
  EXPECT_EQ(human_duration(100), "1m40s");  // short jobs: seconds count (the chart's axis)
  EXPECT_EQ(human_duration(120), "2m");
  EXPECT_EQ(money(0.456), "$0.46");
}

TEST(PlanCatalog, CudaDeviceNamesMapToCatalogIds) {
  const PlanCatalog c = PlanCatalog::load_default();
  EXPECT_EQ(catalog_id_for("NVIDIA GeForce RTX 4090", 25.4, c), "rtx4090");
  EXPECT_EQ(catalog_id_for("NVIDIA GeForce RTX 3080", 10.5, c), "rtx3080");
  // Variants of one chip: the memory decides.
  EXPECT_EQ(catalog_id_for("NVIDIA A100-SXM4-80GB", 85.1, c), "a100-80gb");
  EXPECT_EQ(catalog_id_for("NVIDIA A100-PCIE-40GB", 42.4, c), "a100-40gb");
  EXPECT_EQ(catalog_id_for("NVIDIA H100 80GB HBM3", 85.0, c), "h100");
  EXPECT_EQ(catalog_id_for("NVIDIA H200", 150.0, c), "h200");
  // The longest match wins: an L40S is not an L4.
  EXPECT_EQ(catalog_id_for("NVIDIA L40S", 48.3, c), "l40s");
  EXPECT_EQ(catalog_id_for("NVIDIA L4", 23.8, c), "l4");
  EXPECT_EQ(catalog_id_for("NVIDIA RTX A5000", 25.4, c), "rtx-a5000");
  EXPECT_EQ(catalog_id_for("NVIDIA RTX 6000 Ada Generation", 51.0, c), "rtx6000-ada");
  EXPECT_EQ(catalog_id_for("Tesla T4", 15.8, c), "");
}

TEST(Calibration, ManifestRunsMayGiveTheirInputAsPixels) {
  // Tiled calls differ in size at the frame's edges: the profiler writes their mean input pixels.
  const PlanCatalog c = PlanCatalog::load_default();
  const Device cpu = local_cpu();
  auto manifest = [](json run) {
    return json{{"schema", 1}, {"kind", "framelift-profile"}, {"device", {{"id", "cpu"}}}, {"precision", "fp32"},
                {"runs", json::array({run})}};
  };
  Calibration by_size, by_pixels;
  by_size.add_manifest(manifest({{"arch", "rrdbnet"}, {"scale", 4}, {"input_width", 96}, {"input_height", 64}, {"seconds", 2.0}}),
                       "a.json", c);
  by_pixels.add_manifest(manifest({{"arch", "rrdbnet"}, {"scale", 4}, {"input_width", 1}, {"input_height", 1},
                                   {"input_pixels", 96 * 64}, {"seconds", 2.0}}),
                         "b.json", c);
  EXPECT_DOUBLE_EQ(by_size.compute_efficiency(cpu, "rrdbnet", "fp32"), by_pixels.compute_efficiency(cpu, "rrdbnet", "fp32"));
}
