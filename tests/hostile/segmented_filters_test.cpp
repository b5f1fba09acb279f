// A job cuts the video into segments that are filtered one at a time. A filter graph that counts,
// drops or fades frames from the start of the video would restart at every segment: select's
// gte(n,5) once made 26 frames of 48 in a job and 43 with --no-job, with exit 0. Such a graph now
// runs as one segment, and each job's frames equal (framemd5) those of the --no-job run; graphs
// that work frame by frame keep their segments.
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

struct Case {
  const char* name;  // the test's name: the graph's characters are not allowed in one
  const char* graph;
  bool whole_video;  // expected: run as one segment
};

class SegmentedFilters : public ::testing::TestWithParam<Case> {};

std::string run_args(const fs::path& out, const std::string& graph, const std::string& mode) {
  return "--log-level info run -i " + shell_quote(media("real_megamind.mkv")) + " -o " + shell_quote(out) +
         " --pipeline \"filter:graph=[" + graph + "]\" -c ffv1 --progress none " + mode;
}

TEST_P(SegmentedFilters, AJobWritesTheFramesOfAWholeRun) {
  const Case c = GetParam();
  const fs::path dir = temp_dir("segmented-filter");
  const auto whole = framelift(run_args(dir / "whole.mkv", c.graph, "--no-job"));
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const auto job = framelift(run_args(dir / "job.mkv", c.graph, "--segment-frames 8"));
  ASSERT_EQ(job.exit_code, 0) << job.output;
  const auto a = framemd5(dir / "whole.mkv", "0:v", false), b = framemd5(dir / "job.mkv", "0:v", false);
  ASSERT_EQ(a.size(), b.size()) << c.graph << "\n" << job.output;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].md5, b[i].md5) << c.graph << ": frame " << i;
    EXPECT_DOUBLE_EQ(a[i].pts_s, b[i].pts_s) << c.graph << ": frame " << i;
  }
  const bool one_segment = job.output.find("from 1 segment(s)") != std::string::npos;
  EXPECT_EQ(one_segment, c.whole_video) << job.output;
  if (c.whole_video) {
    EXPECT_NE(job.output.find("the job runs as one segment, not in segments of --segment-frames 8"), std::string::npos)
        << job.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, SegmentedFilters,
                         ::testing::Values(Case{"SelectByCounter", "select=gte(n\\\\,5)", true},
                                           Case{"SelectByTime", "select=gte(t\\\\,0.5)", true},
                                           Case{"HueByCounter", "hue=h=n*10", true}, Case{"FadeByFrames", "fade=in:0:30", true},
                                           Case{"Framestep", "framestep=2", true}, Case{"HueByTime", "hue=h=t*10", false},
                                           Case{"CropUnsharp", "crop=iw-8:ih-8,unsharp", false}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace framelift::test
