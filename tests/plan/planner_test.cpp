// The planner's choices: memory fit decides before price, then deadline, then cost.
#include <gtest/gtest.h>

#include "plan/format.h"
#include "plan/planner.h"
#include "plan/report.h"
#include "plan_test_util.h"

using namespace framelift::plan;
using namespace framelift::plan::testing;

namespace {

const OfferEstimate& row(const Plan& p, const std::string& gpu, const std::string& provider) {
  for (const auto& r : p.rows)
    if (r.est.device.id == gpu && r.provider.id == provider) return r;
  throw std::runtime_error("no row " + gpu + "/" + provider);
}

}  // namespace

TEST(Planner, NeverRecommendsADeviceTheJobDoesNotFit) {
  // RIFE runs on whole frames: 4K needs more than the cheap 1 GB card has, however cheap it is.
  nlohmann::json doc{{"gpus", {gpu("tiny", 1, 1000), gpu("big", 48, 100)}},
                     {"providers", {provider("p")}},
                     {"offers", {offer("p", "tiny", 0.01), offer("p", "big", 3.0)}}};
  const PlanCatalog c = catalog(doc);
  Job j = job_1080p({interpolate(2)});
  j.width = 3840;
  j.height = 2160;
  const Plan plan = make_plan(j, c, {}, Calibration());
  EXPECT_EQ(row(plan, "tiny", "p").est.fit, Fit::No);
  EXPECT_FALSE(row(plan, "tiny", "p").est.why_not.empty());
  ASSERT_TRUE(plan.recommended);
  EXPECT_EQ(plan.rows[*plan.recommended].est.device.id, "big");
  EXPECT_LE(plan.rows[*plan.recommended].est.memory_gb, 48 * 0.8);
  EXPECT_EQ(plan.rows.back().est.device.id, "tiny");  // what cannot run ranks last
}

TEST(Planner, NeverRecommendsATightFit) {
  // Weights and context fit in 1.2 GB only by eating into the 20% margin.
  nlohmann::json doc{{"gpus", {gpu("tight", 1.15, 1000), gpu("roomy", 24, 100)}},
                     {"providers", {provider("p")}},
                     {"offers", {offer("p", "tight", 0.01), offer("p", "roomy", 1.0)}}};
  const Plan plan = make_plan(job_1080p({upscale("srvgg_compact", 2)}), catalog(doc), {}, Calibration());
  EXPECT_NE(row(plan, "tight", "p").est.fit, Fit::Yes);
  ASSERT_TRUE(plan.recommended);
  EXPECT_EQ(plan.rows[*plan.recommended].est.device.id, "roomy");
}

TEST(Planner, PicksTheCheaperOfTwoFittingOffers) {
  nlohmann::json doc{{"gpus", {gpu("g", 24, 100)}},
                     {"providers", {provider("dear"), provider("cheap")}},
                     {"offers", {offer("dear", "g", 2.0), offer("cheap", "g", 1.0)}}};
  const Plan plan = make_plan(job_1080p({upscale("srvgg_compact", 2)}), catalog(doc), {}, Calibration());
  ASSERT_TRUE(plan.recommended);
  EXPECT_EQ(plan.rows[*plan.recommended].provider.id, "cheap");
  EXPECT_NEAR(row(plan, "g", "dear").cost, 2 * row(plan, "g", "cheap").cost, 1e-9);
}

TEST(Planner, DeadlineBeatsPrice) {
  nlohmann::json doc{{"gpus", {gpu("slow", 24, 20), gpu("fast", 80, 800)}},
                     {"providers", {provider("p")}},
                     {"offers", {offer("p", "slow", 0.2), offer("p", "fast", 4.0)}}};
  const Job j = job_1080p({upscale("rrdbnet", 4)});
  const Calibration cal;
  const Plan open = make_plan(j, catalog(doc), {}, cal);
  const double slow_time = row(open, "slow", "p").time_s, fast_time = row(open, "fast", "p").time_s;
  ASSERT_LT(fast_time, slow_time);
  PlanOptions o;
  o.deadline_s = (slow_time + fast_time) / 2;
  const Plan plan = make_plan(j, catalog(doc), o, cal);
  ASSERT_TRUE(plan.recommended);
  EXPECT_EQ(plan.rows[*plan.recommended].est.device.id, "fast");
  EXPECT_FALSE(row(plan, "slow", "p").meets_deadline);
  // Nothing meets an impossible deadline: no recommendation, but a sentence naming the fastest.
  o.deadline_s = 1;
  const Plan none = make_plan(j, catalog(doc), o, cal);
  EXPECT_FALSE(none.recommended);
  EXPECT_NE(none.recommendation.find("fast"), std::string::npos);
}

TEST(Planner, TimeIsFramesOverFpsPlusStartupAndTransfer) {
  nlohmann::json doc{{"gpus", {gpu("g", 24, 100)}}, {"providers", {provider("p")}}, {"offers", {offer("p", "g", 1.0)}}};
  const Job j = job_1080p({upscale("srvgg_compact", 2)});
  PlanOptions o;
  const Plan plan = make_plan(j, catalog(doc), o, Calibration());
  const auto& r = plan.rows.at(0);
  EXPECT_NEAR(r.compute_s, o.startup_s + j.out_frames() / r.est.fps, 1e-6);
  EXPECT_NEAR(r.transfer_s, (j.input_bytes + plan.output_bytes) * 8 / 10e9, 1e-9);
  EXPECT_NEAR(r.cost, (r.compute_s + r.transfer_s) / 3600 * 1.0, 1e-9);
}

// plan --local: this machine is already up, so its time is the frames' alone (a 13.6 s job was
// predicted at 1m43s with a cloud machine's 90 s start-up added).
TEST(Planner, LocalMachineHasNoStartupTime) {
  nlohmann::json doc{{"gpus", {gpu("g", 24, 100)}}, {"providers", {provider(kLocalProvider), provider("cloud")}},
                     {"offers", {offer(kLocalProvider, "g", 0.0), offer("cloud", "g", 1.0)}}};
  const Job j = job_1080p({upscale("srvgg_compact", 2)});
  const Plan plan = make_plan(j, catalog(doc), PlanOptions(), Calibration());
  const auto& local = row(plan, "g", kLocalProvider);
  const auto& cloud = row(plan, "g", "cloud");
  EXPECT_NEAR(local.compute_s, j.out_frames() / local.est.fps, 1e-6);
  EXPECT_NEAR(cloud.compute_s - local.compute_s, PlanOptions().startup_s, 1e-6);
}

// A stage without a cost model (a filter graph) is left out of the figures and marked unknown on
// the row, in the report's text and JSON, never refused; fields from deinterlacing double the
// frames the next network runs on.
TEST(Planner, UnpricedStagesAreFlaggedAndFieldsDoubleTheWork) {
  nlohmann::json doc{{"gpus", {gpu("g", 24, 100)}}, {"providers", {provider("p")}}, {"offers", {offer("p", "g", 1.0)}}};
  const Job base = job_1080p({upscale("srvgg_compact", 2)});
  StageSpec filter;
  filter.kind = "filter";
  filter.model = "filter (hqdn3d=4)";
  filter.priced = false;
  Job with_filter = base;
  with_filter.stages.insert(with_filter.stages.begin(), filter);
  const Plan a = make_plan(base, catalog(doc), PlanOptions(), Calibration());
  const Plan b = make_plan(with_filter, catalog(doc), PlanOptions(), Calibration());
  EXPECT_NEAR(b.rows.at(0).est.gpu_s_per_frame, a.rows.at(0).est.gpu_s_per_frame, 1e-12);
  bool flagged = false;
  for (const auto& w : b.rows.at(0).est.warnings) flagged |= w.find("filter (hqdn3d=4): cost unknown") != std::string::npos;
  EXPECT_TRUE(flagged);
  EXPECT_EQ(b.rows.at(0).est.unknown_stages, std::vector<std::string>{"filter (hqdn3d=4)"});
  EXPECT_TRUE(a.rows.at(0).est.cost_known());
  const nlohmann::json j = plan_json(b);
  EXPECT_EQ(j["rows"][0]["cost_known"], false);
  EXPECT_EQ(j["job"]["stages"][0]["cost_known"], false);
  EXPECT_TRUE(j["job"]["stages"][0]["gflops_per_input_megapixel"].is_null());
  EXPECT_EQ(plan_json(a)["rows"][0]["cost_known"], true);
  // The time and cost cells are lower bounds, the fps an upper one.
  const std::string text = plan_text(b);
  EXPECT_NE(text.find(" >" + human_duration(b.rows.at(0).time_s)), std::string::npos) << text;
  EXPECT_NE(text.find(" <"), std::string::npos) << text;
  EXPECT_EQ(plan_text(a).find(" >"), std::string::npos) << plan_text(a);
  StageSpec fields = filter;
  fields.kind = "deinterlace";
  fields.frame_factor = 2;
  Job with_fields = base;
  with_fields.stages.insert(with_fields.stages.begin(), fields);
  const Plan c = make_plan(with_fields, catalog(doc), PlanOptions(), Calibration());
  EXPECT_NEAR(c.rows.at(0).est.gpu_s_per_frame, 2 * a.rows.at(0).est.gpu_s_per_frame, 1e-9);
  EXPECT_EQ(with_fields.out_frames(), 2 * base.out_frames());
}

TEST(Planner, SpotAddsExpectedReworkThatGrowsWithTheRate) {
  nlohmann::json doc{{"gpus", {gpu("g", 24, 100)}}, {"providers", {provider("p")}}, {"offers", {offer("p", "g", 1.0, 0.5)}}};
  const Job j = job_1080p({upscale("rrdbnet", 4)});
  PlanOptions o;
  o.interruption_rate = 0;
  const auto calm = make_plan(j, catalog(doc), o, Calibration()).rows.at(0);
  o.interruption_rate = 0.5;
  const auto stormy = make_plan(j, catalog(doc), o, Calibration()).rows.at(0);
  EXPECT_NEAR(*calm.spot_cost, calm.time_s / 3600 * 0.5, 1e-9);
  EXPECT_GT(*stormy.spot_time_s, calm.time_s);
  EXPECT_GT(stormy.expected_interruptions, 0);
  EXPECT_NEAR(*stormy.spot_cost, *stormy.spot_time_s / 3600 * 0.5, 1e-9);
}

TEST(Planner, RanksBySpotWhenAsked) {
  nlohmann::json doc{{"gpus", {gpu("g", 24, 100)}},
                     {"providers", {provider("a"), provider("b")}},
                     {"offers", {offer("a", "g", 1.0, 0.9), offer("b", "g", 1.2, 0.3)}}};
  PlanOptions o;
  o.interruption_rate = 0;
  const Job j = job_1080p({upscale("srvgg_compact", 2)});
  EXPECT_EQ(make_plan(j, catalog(doc), o, Calibration()).rows.at(0).provider.id, "a");
  o.spot = true;
  EXPECT_EQ(make_plan(j, catalog(doc), o, Calibration()).rows.at(0).provider.id, "b");
}

TEST(Planner, MoreMemoryAllowsALargerTile) {
  Job j = job_1080p({upscale("rrdbnet", 4)});
  j.width = 3840;
  j.height = 2160;
  const PlanCatalog c = catalog({{"gpus", {gpu("small", 10, 100), gpu("large", 80, 100)}}});
  const auto small = estimate_device(j, *c.device("small"), 8, {}, Calibration());
  const auto large = estimate_device(j, *c.device("large"), 8, {}, Calibration());
  ASSERT_EQ(small.fit, Fit::Yes);
  EXPECT_GT(small.tile, 0);
  EXPECT_TRUE(large.tile == 0 || large.tile > small.tile);
  EXPECT_GE(small.margin, 0.2);
  EXPECT_GE(small.tile, kMinTile);
}

TEST(Planner, NoNvencFallsToTheCpuWithAWarning) {
  const PlanCatalog c = PlanCatalog::load_default();
  Job j = job_1080p({upscale("srvgg_compact", 2)});
  const auto h100 = estimate_device(j, *c.device("h100"), 16, {}, Calibration());
  EXPECT_FALSE(h100.encode.on_gpu);
  EXPECT_EQ(h100.encode.codec, "libx265");
  ASSERT_FALSE(h100.warnings.empty());
  EXPECT_NE(h100.warnings.front().find("no NVENC"), std::string::npos);
  const auto l4 = estimate_device(j, *c.device("l4"), 16, {}, Calibration());
  EXPECT_TRUE(l4.encode.on_gpu);
  // AV1 needs an Ada encoder: the RTX 3090 has NVENC but not for AV1.
  j.codec = "av1_nvenc";
  EXPECT_TRUE(estimate_device(j, *c.device("rtx3090"), 16, {}, Calibration()).encode.fell_back);
  EXPECT_FALSE(estimate_device(j, *c.device("rtx4090"), 16, {}, Calibration()).encode.fell_back);
}

TEST(Planner, WarnsOfOverkillWhenTheEncoderBounds) {
  const PlanCatalog c = PlanCatalog::load_default();
  Job j = job_1080p({upscale("srvgg_compact", 2)});
  j.codec = "libx265";
  j.preset = "slow";
  const auto e = estimate_device(j, *c.device("h200"), 16, {}, Calibration());
  EXPECT_EQ(e.bound, "encode");
  bool overkill = false;
  for (const auto& w : e.warnings) overkill = overkill || w.find("overkill") != std::string::npos;
  EXPECT_TRUE(overkill);
}

TEST(Planner, InterpolationMultipliesFramesAndWork) {
  const PlanCatalog c = catalog({{"gpus", {gpu("g", 24, 100)}}});
  const Job one = job_1080p({upscale("srvgg_compact", 2)});
  const Job two = job_1080p({upscale("srvgg_compact", 2), interpolate(3)});
  EXPECT_EQ(two.out_frames(), 3 * one.out_frames());
  const auto a = estimate_device(one, *c.device("g"), 16, {}, Calibration());
  const auto b = estimate_device(two, *c.device("g"), 16, {}, Calibration());
  EXPECT_GT(b.gpu_s_per_frame, a.gpu_s_per_frame);
}

TEST(Report, JsonTextAndHtmlCarryTheRecommendation) {
  const PlanCatalog c = PlanCatalog::load_default();
  PlanOptions o;
  o.deadline_s = 4 * 3600;
  const Plan plan = make_plan(job_1080p({upscale("srvgg_compact", 2)}), c, o, Calibration());
  ASSERT_TRUE(plan.recommended);
  const auto j = plan_json(plan);
  EXPECT_EQ(j["rows"].size(), c.offers().size());
  EXPECT_TRUE(j["rows"][*plan.recommended]["recommended"].get<bool>());
  EXPECT_EQ(j["recommendation"], plan.recommendation);
  const std::string text = plan_text(plan);
  EXPECT_NE(text.find(plan.recommendation), std::string::npos);
  EXPECT_NE(text.find("as of"), std::string::npos);
  const std::string html = plan_html(plan);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("deadline"), std::string::npos);
  // Self-contained: no scripts, stylesheets or images from elsewhere.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST(Planner, ForcedTileIsUsedAndCountsTheTilesContextLikeTheTiler) {
  // 100 x 70 in 64 px tiles with 10 px of context: two spans of 50 along x, two of 35 along y
  // (util/tile_spans.h: equal spans, no remainder tile), windows 60 + 60 wide, 45 + 45 high
  // (clipped at the frame's edges), four calls.
  const TiledPixels t = tiled_input_pixels(100, 70, 64, 10, 1);
  EXPECT_EQ(t.calls, 4);
  EXPECT_DOUBLE_EQ(t.total, (60.0 + 60.0) * (45.0 + 45.0));
  EXPECT_DOUBLE_EQ(t.largest, 60.0 * 45.0);
  // A tile at least as large as the frame is the whole frame, padded to the multiple.
  EXPECT_DOUBLE_EQ(tiled_input_pixels(100, 70, 128, 10, 4).total, 100.0 * 72.0);
  EXPECT_EQ(tiled_input_pixels(100, 70, 0, 10, 1).calls, 1);

  const PlanCatalog c = PlanCatalog::load_default();
  Job j = framelift::plan::testing::job_1080p({framelift::plan::testing::upscale("rrdbnet", 4)});
  j.tile = 256;
  const auto e = estimate_device(j, *c.device("h100"), 16, {}, Calibration());
  EXPECT_EQ(e.tile, 256);
  ASSERT_EQ(e.stages.size(), 1u);
  const TiledPixels frame = tiled_input_pixels(1920, 1080, 256, framelift::arch::cost("rrdbnet", 4).tile_overlap, 1);
  EXPECT_DOUBLE_EQ(e.stages[0].calls_per_frame, frame.calls);
  EXPECT_DOUBLE_EQ(e.stages[0].pixels_per_call, frame.total / frame.calls);
  // Smaller tiles than the whole frame: the activation estimate is one tile's, not the frame's.
  j.tile = 0;
  const auto whole = estimate_device(j, *c.device("h100"), 16, {}, Calibration());
  EXPECT_EQ(whole.tile, 0);
  EXPECT_LT(e.stages[0].activation_bytes, whole.stages[0].activation_bytes / 4);
}

TEST(Planner, RealPlksrWithGroupNormIsPlannedOnWholeFramesEvenWhenATileIsForced) {
  // Its GroupNorm takes statistics of the whole frame, so the tiler runs it whole (ModelInfo.tiled,
  // src/infer/tiler.cpp); the planner must count the same one call per frame.
  const PlanCatalog c = PlanCatalog::load_default();
  auto stage = [](double layer_norm) {
    return framelift::plan::testing::stage("upscale", "realplksr", framelift::arch::cost("realplksr", 4, {{"layer_norm", layer_norm}}), 4, 1);
  };
  Job j = framelift::plan::testing::job_1080p({stage(0)});
  j.precision = "bf16";
  j.tile = 256;
  const auto whole = estimate_device(j, *c.device("h100"), 16, {}, Calibration());
  ASSERT_EQ(whole.stages.size(), 1u);
  EXPECT_EQ(whole.tile, 0);
  EXPECT_DOUBLE_EQ(whole.stages[0].calls_per_frame, 1);
  EXPECT_DOUBLE_EQ(whole.stages[0].pixels_per_call, 1920.0 * 1080.0);
  // The LayerNorm variant is per pixel and takes the tile.
  j.stages = {stage(1)};
  const auto tiled = estimate_device(j, *c.device("h100"), 16, {}, Calibration());
  EXPECT_EQ(tiled.tile, 256);
  EXPECT_GT(tiled.stages[0].calls_per_frame, 1);
}
