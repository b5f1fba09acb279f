// A stage may drop every frame of some segments (a select filter on time keeps the second half):
// those segments hold no packets, and the job still assembles what the others made, the same
// frames as one plain pass. (A pipeline that makes no frames at all is refused: tests/hostile.)
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

TEST(EmptySegments, SegmentsWhoseFramesAStageDropsAreSkippedAtAssembly) {
  const fs::path dir = temp_dir("empty-segments");
  const std::string common = "run -i " + shell_quote(media("cfr_8bit.mkv")) +
                             " --pipeline \"filter:graph='select=gte(t\\,1.2)'\" -c ffv1 --progress none";
  const CliResult pass = framelift(common + " --no-job -o " + shell_quote(dir / "pass.mkv"));
  ASSERT_EQ(pass.exit_code, 0) << pass.output;
  const CliResult job = framelift(common + " --segment-frames 10 -o " + shell_quote(dir / "job.mkv"));
  ASSERT_EQ(job.exit_code, 0) << job.output;
  const auto a = framemd5(dir / "pass.mkv", "0:v", false), b = framemd5(dir / "job.mkv", "0:v", false);
  ASSERT_EQ(a.size(), 20u);  // 50 frames at 25 fps, from 1.2 s on
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(b[i].md5, a[i].md5) << "frame " << i;
    EXPECT_DOUBLE_EQ(b[i].pts_s, a[i].pts_s) << "frame " << i;
  }
}

}  // namespace
}  // namespace framelift::test
