// The planner's disk model: the peak is every segment plus the whole output plus the models to
// install; sizes from the bits-per-pixel table, or from what a profile measured of the codec,
// keyframes (one per segment at least) apart from the other frames. Hand-computed figures.
#include <gtest/gtest.h>

#include "plan/disk_model.h"
#include "plan/planner.h"
#include "plan/report.h"
#include "plan_test_util.h"

using namespace framelift::plan;
using namespace framelift::plan::testing;

namespace {

// 100x100, 48 frames at 24 fps in segments of 1 s: two segments of 24 frames.
Job small_job(const std::string& codec) {
  Job j;
  j.width = j.height = 100;
  j.fps = 24;
  j.frames = 48;
  j.duration_s = 2;
  j.segment_s = 1;
  j.codec = codec;
  return j;
}

nlohmann::json manifest_with_encoder(const nlohmann::json& encoder, std::optional<double> crf) {
  return {{"kind", "framelift-profile"},
          {"device", {{"id", "g"}}},
          {"encoder", {{"codec", encoder["codec"]}, {"crf", crf ? nlohmann::json(*crf) : nlohmann::json(nullptr)}}},
          {"encoders", {encoder}}};
}

PlanCatalog one_gpu() {
  return catalog({{"gpus", {gpu("g", 24, 100)}}, {"providers", {provider("p")}}, {"offers", {offer("p", "g", 1.0)}}});
}

}  // namespace

TEST(DiskModel, TableBitsScaleWithRawBitsForLosslessAndWithCrfForLossy) {
  EXPECT_DOUBLE_EQ(table_bits_per_pixel("ffv1", std::nullopt, 15), table_bits_per_pixel("ffv1", std::nullopt, 12) * 15 / 12);
  EXPECT_DOUBLE_EQ(table_bits_per_pixel("libx264", std::nullopt, 15), table_bits_per_pixel("libx264", std::nullopt, 12));
  // Six crf steps down double x264's and x265's bits; no crf is the encoder's default (23, 28).
  EXPECT_DOUBLE_EQ(table_bits_per_pixel("libx264", 17, 12), 2 * table_bits_per_pixel("libx264", 23, 12));
  EXPECT_DOUBLE_EQ(table_bits_per_pixel("libx264", std::nullopt, 12), table_bits_per_pixel("libx264", 23, 12));
  EXPECT_DOUBLE_EQ(table_bits_per_pixel("libx265", 34, 12), table_bits_per_pixel("libx265", std::nullopt, 12) / 2);
  EXPECT_DOUBLE_EQ(crf_size_factor("ffv1", 10, 30), 1);  // no crf there
  EXPECT_DOUBLE_EQ(table_bits_per_pixel("libsvtav1", 29, 12), 2 * table_bits_per_pixel("libsvtav1", std::nullopt, 12));
  // The table as docs/planner.md gives it: a GOP's mean on 1080p film at the default quality.
  EXPECT_DOUBLE_EQ(table_bits_per_pixel("libx264", std::nullopt, 12), 0.10);
  EXPECT_DOUBLE_EQ(table_bits_per_pixel("hevc_nvenc", std::nullopt, 12), 0.06);
  EXPECT_DOUBLE_EQ(table_bits_per_pixel("libsvtav1", std::nullopt, 12), 0.045);
  EXPECT_DOUBLE_EQ(table_bits_per_pixel("prores_ks", std::nullopt, 12), 3.5);
  EXPECT_DOUBLE_EQ(table_bits_per_pixel("ffv1", std::nullopt, 12), 5.4);
}

TEST(DiskModel, KeyframesComeEveryGopAsTheEncodersPlaceThem) {
  EXPECT_EQ(keyframe_interval("libx264"), 250);
  EXPECT_EQ(keyframe_interval("libx265"), 250);
  EXPECT_EQ(keyframe_interval("ffv1"), 12);
  EXPECT_EQ(keyframe_interval("prores_ks"), 1);
}

TEST(DiskModel, PeakIsEverySegmentPlusTheOutputPlusModels) {
  Job j = small_job("libx264");
  j.other_stream_bytes = 50000;
  j.model_bytes = 64e6;
  j.input_bytes = 3e6;
  const DiskEstimate d = estimate_disk(j, Calibration());
  EXPECT_EQ(d.bits_from, "table");
  const double video = table_bits_per_pixel("libx264", std::nullopt, 12) * 100 * 100 * 48 / 8;
  EXPECT_DOUBLE_EQ(d.segments_bytes, video + 2 * kContainerBytesPerFile + 48 * kContainerBytesPerFrame);
  EXPECT_DOUBLE_EQ(d.output_bytes, video + 50000 + kContainerBytesPerFile + 48 * kContainerBytesPerFrame);
  EXPECT_DOUBLE_EQ(d.peak_bytes(), d.segments_bytes + d.output_bytes + 64e6);
  EXPECT_DOUBLE_EQ(d.input_bytes, 3e6);  // reported, not in the peak: the input is where it is
}

TEST(DiskModel, AMeasuredCodecCountsAKeyframePerSegmentAndPerGop) {
  // Keyframes at 8 bits per pixel, the other frames at 12: FFV1 resets its context every 12
  // frames, so each 24-frame segment has 2 keyframes, 4 in all, and 44 other frames.
  const nlohmann::json ffv1 = {{"codec", "ffv1"}, {"width", 100}, {"height", 100}, {"fps", 10}, {"threads", 1},
                               {"key_frames", 2}, {"key_bytes", 20000}, {"other_frames", 22}, {"other_bytes", 330000}};
  Calibration cal;
  cal.add_manifest(manifest_with_encoder(ffv1, std::nullopt), "ffv1.json", one_gpu());
  const DiskEstimate d = estimate_disk(small_job("ffv1"), cal);
  EXPECT_EQ(d.bits_from, "ffv1.json");
  EXPECT_NEAR(d.bits_per_pixel, (4 * 8.0 + 44 * 12.0) / 48, 1e-9);
  EXPECT_NEAR(d.segments_bytes, (4 * 8.0 + 44 * 12.0) * 100 * 100 / 8 + 2 * kContainerBytesPerFile + 48 * kContainerBytesPerFrame, 1e-6);
  // Another codec is not measured by it: the table.
  EXPECT_EQ(estimate_disk(small_job("libx264"), cal).bits_from, "table");
}

TEST(DiskModel, AMeasurementAtOneCrfIsScaledToTheJobsCrf) {
  const nlohmann::json x264 = {{"codec", "libx264"}, {"width", 100}, {"height", 100}, {"fps", 10}, {"threads", 1},
                               {"key_frames", 1}, {"key_bytes", 5000}, {"other_frames", 23}, {"other_bytes", 23000}};
  Calibration cal;
  cal.add_manifest(manifest_with_encoder(x264, 20), "x264.json", one_gpu());
  Job at20 = small_job("libx264"), at26 = small_job("libx264");
  at20.crf = 20;
  at26.crf = 26;
  EXPECT_NEAR(estimate_disk(at26, cal).bits_per_pixel, estimate_disk(at20, cal).bits_per_pixel / 2, 1e-12);
  // Two segments, two keyframes (x264's keyint 250 is longer than a segment): 2 x 4 + 46 x 0.8 bits.
  EXPECT_NEAR(estimate_disk(at20, cal).bits_per_pixel, (2 * 4.0 + 46 * 0.8) / 48, 1e-9);
  // A profile at the encoder's default (crf 23) priced for a job at 17: twice the bits.
  Calibration at_default;
  at_default.add_manifest(manifest_with_encoder(x264, std::nullopt), "x264.json", one_gpu());
  Job at17 = small_job("libx264");
  at17.crf = 17;
  EXPECT_NEAR(estimate_disk(at17, at_default).bits_per_pixel, 2 * estimate_disk(small_job("libx264"), at_default).bits_per_pixel, 1e-12);
}

TEST(DiskModel, ThePlanSaysWhenTheOutputFolderIsShortAndPutsDiskBytesInItsJson) {
  PlanOptions o;
  o.output_folder = "/out";
  o.output_folder_free_bytes = 1000;
  const Plan plan = make_plan(small_job("libx264"), one_gpu(), o, Calibration());
  bool said = false;
  for (const auto& n : plan.notes) said |= n.find("disk: /out has 1 kB free; the job needs about") != std::string::npos;
  EXPECT_TRUE(said) << plan_text(plan);
  const nlohmann::json j = plan_json(plan);
  EXPECT_DOUBLE_EQ(j["disk_bytes"].get<double>(), plan.disk.peak_bytes());
  EXPECT_EQ(j["disk"]["fits"], false);
  EXPECT_EQ(j["disk"]["free_bytes"], 1000.0);
  EXPECT_DOUBLE_EQ(plan.output_bytes, plan.disk.output_bytes);  // transfer and egress price the same output
  EXPECT_NE(plan_text(plan).find("Disk: about "), std::string::npos);

  o.output_folder_free_bytes = 1e12;
  const Plan roomy = make_plan(small_job("libx264"), one_gpu(), o, Calibration());
  for (const auto& n : roomy.notes) EXPECT_EQ(n.find("disk: /out"), std::string::npos) << n;
  EXPECT_EQ(plan_json(roomy)["disk"]["fits"], true);
}
