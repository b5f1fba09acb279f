// The request's choices are typed (issue 28, item 2): hwaccel, colour conversion, preemption
// watch, shard, segment range and hourly price were strings in RunRequest, parsed wherever they
// were read. Text now exists only at the edges (the CLI, JSON), through framelift/values.h, whose
// parsers are the library's own: the same refusal for every caller.
#include <gtest/gtest.h>

#include <framelift/framelift.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/test_paths.h"

namespace {

using framelift::Error;
using framelift::ErrorKind;

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(Choices, EveryNameRoundTripsAndABadOneNamesItsFlag) {
  for (const char* n : {"none", "auto", "cuda", "vaapi", "qsv", "vdpau", "videotoolbox", "d3d11va", "dxva2", "drm", "opencl", "vulkan"})
    EXPECT_STREQ(framelift::name_of(framelift::parse_hwaccel(n)), n);
  for (const char* n : {"auto", "swscale", "tensor"}) EXPECT_STREQ(framelift::name_of(framelift::parse_color_conversion(n)), n);
  for (const char* n : {"off", "auto", "aws", "gcp", "azure"}) EXPECT_STREQ(framelift::name_of(framelift::parse_preemption_watch(n)), n);
  for (const char* n : {"0/4", "3/4", "auto/8", "auto"}) EXPECT_EQ(framelift::name_of(framelift::parse_shard(n)), n);
  for (const char* n : {"2-5", "7"}) EXPECT_EQ(framelift::name_of(framelift::parse_segment_range(n)), n);
  EXPECT_DOUBLE_EQ(framelift::parse_hourly_price("$0.79"), 0.79);

  EXPECT_NE(usage_error([] { framelift::parse_hwaccel("cdua"); }).find("--hwaccel"), std::string::npos);
  EXPECT_NE(usage_error([] { framelift::parse_color_conversion("gpu"); }).find("--color-conversion"), std::string::npos);
  EXPECT_NE(usage_error([] { framelift::parse_preemption_watch("ibm"); }).find("--watch-preemption"), std::string::npos);
  EXPECT_NE(usage_error([] { framelift::parse_shard("4/4"); }).find("--shard 4/4"), std::string::npos);
  EXPECT_NE(usage_error([] { framelift::parse_shard("auto/0"); }).find("--shard auto/0"), std::string::npos);
  EXPECT_NE(usage_error([] { framelift::parse_segment_range("5-2"); }).find("--segments 5-2"), std::string::npos);
  EXPECT_NE(usage_error([] { framelift::parse_hourly_price("-1"); }).find("--hourly-price"), std::string::npos);
}

// An automatic shard is read on the worker, when the run starts, not where the request is made.
TEST(Choices, AnAutomaticShardReadsTheArrayIndexWhenTheRunStarts) {
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::unsetenv("JOB_COMPLETION_INDEX");
  const framelift::Shard s = framelift::parse_shard("auto/4");
  EXPECT_TRUE(s.from_environment);
  EXPECT_EQ(s.count, 4);
  framelift::RunRequest r;
  r.input = framelift::test::media("real_megamind.mkv").string();
  r.output = (framelift::test::temp_dir("choices") / "out.mkv").string();
  r.shard = s;
  EXPECT_NE(usage_error([&] { framelift::run(r); }).find("neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(r.output));
}

// Typed values a program builds by hand are checked as the text was.
TEST(Choices, ValuesBuiltByHandAreCheckedLikeTheirText) {
  framelift::RunRequest r;
  r.input = framelift::test::media("real_megamind.mkv").string();
  r.output = (framelift::test::temp_dir("choices") / "out.mkv").string();
  r.shard = framelift::Shard{3, 2};
  EXPECT_NE(usage_error([&] { framelift::run(r); }).find("K must be below N"), std::string::npos);
  r.shard.reset();
  r.segments = framelift::SegmentRange{4, 1};
  EXPECT_NE(usage_error([&] { framelift::run(r); }).find("the range is empty"), std::string::npos);
  r.segments.reset();
  r.lifecycle.hourly_price = -2;
  EXPECT_NE(usage_error([&] { framelift::run(r); }).find("--hourly-price"), std::string::npos);
  r.lifecycle.hourly_price.reset();
  r.shard = framelift::Shard{0, 2};
  r.segments = framelift::SegmentRange{0, 1};
  EXPECT_NE(usage_error([&] { framelift::run(r); }).find("not both"), std::string::npos);
}

}  // namespace

namespace {

// The pixel aspect travels with the shape: a Source reports an anamorphic file's (FFV1 in
// Matroska keeps it in the container only), and a Sink writes it, as `run` does.
TEST(Choices, AnAnamorphicSourcesPixelAspectReachesTheSink) {
  const std::filesystem::path dir = framelift::test::temp_dir("aspect-api");
  const std::filesystem::path clip = dir / "anamorphic.mkv", out = dir / "out.mkv";
  std::string log;
  ASSERT_EQ(framelift::test::run_command("ffmpeg -v error -y -f lavfi -i testsrc2=size=64x48:rate=25 -frames:v 6 "
                                         "-vf setsar=16/11 -c:v ffv1 '" + clip.string() + "'", &log), 0) << log;
  framelift::Source source(clip.string());
  EXPECT_EQ(source.shape().sample_aspect_num, 16);
  EXPECT_EQ(source.shape().sample_aspect_den, 11);
  framelift::Sink sink(out.string(), source.shape());
  while (auto f = source.read()) sink.write(*f);
  sink.close();
  ASSERT_EQ(framelift::test::run_command("ffprobe -v error -select_streams v -show_entries stream=sample_aspect_ratio "
                                         "-of csv=p=0 '" + out.string() + "'", &log), 0);
  EXPECT_EQ(log.substr(0, log.find('\n')), "16:11");
}

}  // namespace
