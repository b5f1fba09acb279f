// framelift's ONNX interpreter against ONNX Runtime on networks exported by PyTorch
// (onnx_ort_check.sh makes the cases: onnx_cases.py exports them, onnx_ort.js runs ONNX Runtime).
// Without FRAMELIFT_ONNX_CASES (the plain test_models run) these tests skip; the CTest test
// onnx_ort_reference sets it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "arch_support.h"
#include "cli/cli_runner.h"
#include "arch/declaration.h"
#include "infer/tiler.h"
#include "models/model_files.h"
#include "models/onnx/onnx_model.h"
#include "support/media_check.h"
#include "support/onnx_builder.h"
#include "support/test_paths.h"

namespace framelift::models {
namespace {

namespace fs = std::filesystem;

fs::path cases_dir() {
  const char* dir = std::getenv("FRAMELIFT_ONNX_CASES");
  return dir ? fs::path(dir) : fs::path();
}

at::Tensor read_f32(const fs::path& file, std::vector<int64_t> shape) {
  std::ifstream in(file, std::ios::binary);
  at::Tensor t = at::empty(shape, at::kFloat);
  in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * 4));
  EXPECT_TRUE(in.good()) << file;
  return t;
}

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

// One case of cases.json with its input and ONNX Runtime's output.
struct OrtCase {
  std::string name;
  fs::path model;
  at::Tensor input, reference;
  nlohmann::json spec;
};

std::vector<OrtCase> read_cases(const fs::path& dir) {
  const nlohmann::json cases = read_json(dir / "cases.json"), ort = read_json(dir / "ort.json");
  std::vector<OrtCase> out;
  for (const auto& c : cases) {
    const auto& ref = ort.at(c["case"].get<std::string>());
    out.push_back({c["case"], dir / c["model"].get<std::string>(),
                   read_f32(dir / c["input"].get<std::string>(), c["shape"].get<std::vector<int64_t>>()),
                   read_f32(dir / ref["output"].get<std::string>(), ref["shape"].get<std::vector<int64_t>>()), c});
  }
  return out;
}

// Whole frame and, where the case names a tile size, tiled (tile seams inside the frame): both
// within 50 dB of ONNX Runtime's fp32 output. Each case prints its figures.
TEST(OnnxOrt, EveryExportAgreesWithOnnxRuntimeWholeAndTiled) {
  const fs::path dir = cases_dir();
  if (dir.empty()) GTEST_SKIP() << "FRAMELIFT_ONNX_CASES not set (ctest -R onnx_ort_reference runs this)";
  const std::vector<OrtCase> cases = read_cases(dir);
  ASSERT_FALSE(cases.empty());
  for (const auto& [name, file, x, ref, c] : cases) {
    SCOPED_TRACE(name);
    // The interpreter always; then what open_model runs (a native twin for Compact exports).
    const std::unique_ptr<onnx::OnnxModel> graph = onnx::OnnxModel::load(file);
    const at::Tensor whole = graph->forward(x);
    ASSERT_EQ(whole.sizes(), ref.sizes());
    const double whole_db = test::psnr_in_range(whole, ref);
    EXPECT_GE(whole_db, 50.0);
    std::string line = name + ": whole " + std::to_string(whole_db) + " dB";
    std::unique_ptr<ImageModel> model = open_model(file.string());
    if (model->info().arch != "onnx_graph") {
      const double native_db = test::psnr_in_range(model->forward(x), ref);
      EXPECT_GE(native_db, 50.0) << model->info().arch;
      line += ", native " + model->info().arch + " " + std::to_string(native_db) + " dB";
    }
    if (const int tile = c["tile"]; tile > 0) {
      const int overlap = c["overlap"];
      const at::Tensor tiled = infer::upscale_tiled(*model, x, {tile, overlap, 1});
      const double tiled_db = test::psnr_in_range(tiled, ref);
      EXPECT_GE(tiled_db, 50.0) << "tile " << tile << ", overlap " << overlap;
      line += ", tiled (" + std::to_string(tile) + " px, overlap " + std::to_string(overlap < 0 ? model->info().tile_overlap : overlap) +
              ") " + std::to_string(tiled_db) + " dB";
    }
    std::cout << "onnx_ort: " << line << "\n";
  }
}

// bf16 as --precision bf16 runs it (weights and activations bf16, Cast kept in bf16, the fp32
// islands): within 30 dB of ONNX Runtime's fp32, the bound the native architectures' bf16 checks
// use (tests/models/arch_*_test.cpp); 25 for the GridSample modes (onnx_cases.py says why).
TEST(OnnxOrt, Bf16RunsStayWithin30dBOfOnnxRuntime) {
  const fs::path dir = cases_dir();
  if (dir.empty()) GTEST_SKIP() << "FRAMELIFT_ONNX_CASES not set";
  for (const auto& [name, file, x, ref, c] : read_cases(dir)) {
    SCOPED_TRACE(name);
    std::unique_ptr<ImageModel> model = open_model(file.string());
    model->to(at::kCPU, at::kBFloat16);
    const at::Tensor y = model->forward(x);
    EXPECT_EQ(y.scalar_type(), at::kFloat);
    const double db = test::psnr_in_range(y, ref);
    EXPECT_GE(db, c["bf16_db"].get<double>());
    std::cout << "onnx_ort: " << name << ": bf16 " << db << " dB\n";
  }
}

// The planner prices an ONNX file by its operators: counted on the Compact export (16 features,
// 4 body convs, x4), that is what the native srvgg_compact walk says its .pth twin costs; a file
// the native path runs is priced by the native walk, one the interpreter runs by its operators.
TEST(OnnxOrt, ThePlannersCostOfACompactExportIsItsPthTwins) {
  const fs::path dir = cases_dir();
  if (dir.empty()) GTEST_SKIP() << "FRAMELIFT_ONNX_CASES not set";
  const arch::ArchCost counted = onnx::OnnxModel::load(dir / "compact_op13.onnx")->cost_model();
  const arch::ArchCost native = arch::cost("srvgg_compact", 4, {{"num_feat", 16}, {"num_conv", 4}});
  EXPECT_DOUBLE_EQ(counted.macs_per_px, native.macs_per_px);
  EXPECT_EQ(counted.scale, 4);
  std::cout << "onnx_ort: compact x4 " << counted.macs_per_px << " MACs/px (native walk " << native.macs_per_px << "), peak "
            << counted.peak_elems_per_px << " elems/px (native " << native.peak_elems_per_px << ")\n";
  // A graph without a native twin is priced by its operators (the LeakyReLU Compact, x2).
  const ModelFileNetwork lrelu = detect_model_file(dir / "compact_lrelu_op13.onnx");
  ASSERT_TRUE(lrelu.graph_cost);
  EXPECT_FALSE(lrelu.native);
  const ModelFileNetwork twin = detect_model_file(dir / "compact_op13.onnx");
  ASSERT_TRUE(twin.native);  // priced, as it runs, by the native walk
  EXPECT_EQ(twin.native->arch, "srvgg_compact");
  // `framelift plan` prices the stage from it (2 FLOPs a MAC: 33.12 GFLOP per input megapixel).
  auto r = test::framelift("plan -i " + test::shell_quote(test::media("real_megamind.mkv")) + " --pipeline 'upscale:model=" +
                           (dir / "compact_lrelu_op13.onnx").string() + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto stage = nlohmann::json::parse(r.output)["job"]["stages"][0];
  EXPECT_EQ(stage["arch"], "onnx_graph");
  EXPECT_EQ(stage["cost_known"], true);
  EXPECT_NEAR(stage["gflops_per_input_megapixel"].get<double>(), 2 * lrelu.graph_cost->macs_per_px / 1e3, 0.01);
}

TEST(OnnxOrt, ModelsInfoDescribesAnExport) {
  const fs::path dir = cases_dir();
  if (dir.empty()) GTEST_SKIP() << "FRAMELIFT_ONNX_CASES not set";
  auto r = test::framelift("models info " + test::shell_quote(dir / "compact_op17.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["format"], "onnx");
  EXPECT_EQ(j["opset"], 17);
  EXPECT_EQ(j["graph"]["scale"], 4);
  EXPECT_EQ(j["graph"]["in_channels"], 3);
  EXPECT_EQ(j["operators"]["Conv"], 6);
  EXPECT_EQ(j["operators"]["PRelu"], 5);
  // Its weights are Compact's: the native network runs it (and reproduced it, onnx_native.h).
  EXPECT_EQ(j["native"]["arch"], "srvgg_compact");
  EXPECT_EQ(j["native"]["hyperparameters"]["num_feat"], 16);
  EXPECT_EQ(j["native"]["hyperparameters"]["num_conv"], 4);
  EXPECT_EQ(open_model((dir / "compact_op17.onnx").string())->info().arch, "srvgg_compact");
  // An RRDBNet export whose initializers kept BasicSR's names runs on the native rrdbnet.
  r = test::framelift("models info " + test::shell_quote(dir / "esrgan_op11.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["native"]["arch"], "rrdbnet");
  EXPECT_EQ(open_model((dir / "esrgan_op11.onnx").string())->info().arch, "rrdbnet");
  // A SPAN export under upstream's names keeps each Conv3XC's eval_conv alone: the native span
  // reads that deployed layout. Whether the input was normalised lives in a buffer the export
  // drops, so both readings are tried and the one that reproduces the graph runs.
  r = test::framelift("models info " + test::shell_quote(dir / "span_upstream_op17.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto span = nlohmann::json::parse(r.output)["native"];
  EXPECT_EQ(span["arch"], "span");
  EXPECT_EQ(span["hyperparameters"]["feature_channels"], 16);
  EXPECT_EQ(span["hyperparameters"]["norm"], 1);
  EXPECT_EQ(span["hyperparameters"]["deployed"], 1);
  EXPECT_EQ(open_model((dir / "span_upstream_op11.onnx").string())->info().arch, "span");
  r = test::framelift("models info " + test::shell_quote(dir / "span_upstream_nonorm_op17.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["native"]["hyperparameters"]["norm"], 0);
  EXPECT_EQ(nlohmann::json::parse(r.output)["graph"]["scale"], 3);
  EXPECT_EQ(open_model((dir / "span_upstream_nonorm_op17.onnx").string())->info().arch, "span");
  // A Compact with LeakyReLU is no native architecture: the interpreter runs it.
  r = test::framelift("models info " + test::shell_quote(dir / "compact_lrelu_op13.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(nlohmann::json::parse(r.output)["native"].is_null());
  for (const char* interpreted : {"compact_lrelu_op13.onnx", "span_op17.onnx", "swinir_op17.onnx", "realplksr_op17.onnx"})
    EXPECT_EQ(open_model((dir / interpreted).string())->info().arch, "onnx_graph") << interpreted;
  // FRAMELIFT_ONNX_GRAPH=1 keeps the interpreter for every file.
  setenv("FRAMELIFT_ONNX_GRAPH", "1", 1);
  EXPECT_EQ(open_model((dir / "compact_op17.onnx").string())->info().arch, "onnx_graph");
  unsetenv("FRAMELIFT_ONNX_GRAPH");
}

// The CLI end to end on real footage: `upscale -m file.onnx`, whole and in tiles, the output 4x.
TEST(OnnxOrt, UpscaleRunsAnOnnxFileOnARealClip) {
  const fs::path dir = cases_dir();
  if (dir.empty()) GTEST_SKIP() << "FRAMELIFT_ONNX_CASES not set";
  const fs::path out = test::temp_dir("onnx_upscale");
  for (const std::string tile : {"0", "64"}) {
    const fs::path file = out / ("out_tile" + tile + ".mkv");
    auto r = test::framelift("upscale -i " + test::shell_quote(test::media("real_megamind.mkv")) + " -o " + test::shell_quote(file) +
                             " -m " + test::shell_quote(dir / "compact_op13.onnx") + " --frames 2 --tile " + tile);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto probe = test::ffprobe(file);
    const auto source = test::ffprobe(test::media("real_megamind.mkv"));
    EXPECT_EQ(probe["streams"][0]["width"].get<int>(), 4 * source["streams"][0]["width"].get<int>());
    EXPECT_EQ(probe["streams"][0]["height"].get<int>(), 4 * source["streams"][0]["height"].get<int>());
  }
}

// `models import` takes an .onnx file into the model cache (architecture "onnx", the probed
// scale), `-m NAME` runs it; a model whose weights lie in external files is refused, since the
// cache would hold the graph alone.
TEST(OnnxOrt, ModelsImportRegistersAnOnnxFileAndRefusesExternalWeights) {
  const fs::path dir = cases_dir();
  if (dir.empty()) GTEST_SKIP() << "FRAMELIFT_ONNX_CASES not set";
  const fs::path work = test::temp_dir("onnx_import");
  const std::string env = "FRAMELIFT_MODELS=" + test::shell_quote(work / "models") + " ";
  auto cli = [&](const std::string& args) {
    test::CliResult r;
    r.exit_code = test::run_command(env + test::shell_quote(test::cli_path()) + " " + args, &r.output);
    return r;
  };
  auto r = cli("models import " + test::shell_quote(dir / "span_op17.onnx") + " --name my-span-onnx");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = cli("models list --installed --json 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto listed = nlohmann::json::parse(r.output);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["architecture"], "onnx");
  EXPECT_EQ(listed[0]["scale"], 2);
  const fs::path up = work / "up.mkv";
  r = cli("upscale -i " + test::shell_quote(test::media("cfr_8bit.mkv")) + " -o " + test::shell_quote(up) +
          " -m my-span-onnx --frames 1 --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(test::ffprobe(up)["streams"][0]["width"].get<int>(), 2 * test::ffprobe(test::media("cfr_8bit.mkv"))["streams"][0]["width"].get<int>());

  // A 1x1 convolution whose weight lies in w.bin beside the graph.
  namespace ob = test::onnx_build;
  auto entry = [](const std::string& k, const std::string& v) { return test::Proto().string(1, k).string(2, v); };
  test::Proto w;
  w.packed_varints(1, {3, 3, 1, 1}).varint(2, 1).string(8, "w").message(13, entry("location", "w.bin")).varint(14, 1);
  const auto bytes = ob::model(ob::graph({ob::node("Conv", {"x", "w"}, {"y"})}, {w}, {ob::value_info("x", {1, 3, -1, -1})},
                                         {ob::value_info("y", {1, 3, -1, -1})}))
                         .bytes();
  std::ofstream(work / "ext.onnx", std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const std::vector<float> weight = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  std::ofstream(work / "w.bin", std::ios::binary).write(reinterpret_cast<const char*>(weight.data()), 36);
  r = cli("models info " + test::shell_quote(work / "ext.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["external_data"], nlohmann::json::array({"w.bin"}));
  r = cli("models import " + test::shell_quote(work / "ext.onnx"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("external file(s) beside it (w.bin...), which models import does not copy"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace framelift::models
