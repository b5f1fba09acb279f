#include <gtest/gtest.h>

#include <set>

#include "cli/cli_runner.h"

namespace framelift::test {
namespace {

nlohmann::json probe_json(const std::filesystem::path& file) {
  auto r = framelift("probe --json -i " + shell_quote(file) + " 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output);
}

TEST(Probe, ConstantRateClipWithAllStreamKinds) {
  auto j = probe_json(media("cfr_8bit.mkv"));
  auto& v = j["streams"][j["video_stream"].get<int>()];
  EXPECT_EQ(v["width"], 320);
  EXPECT_EQ(v["frame_count"], 50);
  EXPECT_EQ(v["variable_frame_rate"], false);
  EXPECT_DOUBLE_EQ(v["frame_rate"].get<double>(), 25.0);
  EXPECT_EQ(v["bit_depth"], 8);
  EXPECT_EQ(j["chapters"], 2);
  std::set<std::string> types;
  for (auto& s : j["streams"]) types.insert(s["type"].get<std::string>());
  EXPECT_EQ(types, (std::set<std::string>{"video", "audio", "subtitle", "attachment"}));
}

TEST(Probe, VariableRateIsDetectedAndCounted) {
  auto j = probe_json(media("vfr.mkv"));
  auto& v = j["streams"][j["video_stream"].get<int>()];
  EXPECT_EQ(v["frame_count"], 49);
  EXPECT_EQ(v["variable_frame_rate"], true);
}

TEST(Probe, TenBitHdrAndRotation) {
  auto j = probe_json(media("hdr10_10bit.mp4"));
  auto& v = j["streams"][j["video_stream"].get<int>()];
  EXPECT_EQ(v["bit_depth"], 10);
  EXPECT_EQ(v["hdr"], true);
  EXPECT_EQ(v["color"]["transfer"], "smpte2084");
  EXPECT_DOUBLE_EQ(std::abs(v["side_data"]["rotation"].get<double>()), 90.0);
  EXPECT_EQ(v["frame_count"], 24);
}

TEST(Probe, NotMediaIsAClearError) {
  auto r = framelift("probe -i " + shell_quote(media("not_media.mkv")));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.output.find("not_media.mkv: not a media file"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace framelift::test
