// Issue 29: a job stopped at each early point (before its plan is written, after it, while the
// first segment's encoder opens, after its first packet, while a segment is committed, during
// assembly) by SIGKILL and by SIGTERM, delivered at that point by the process itself
// (util/crash_point.h) so no timing decides where it lands. Each stop exits as documented (137,
// 130) with nothing under the output's name; rerunning the same command then ends with the frames
// of one plain `--no-job` pass, every one of them (FFV1, md5 per frame), and the audio.
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "support/early_stops.h"
#include "support/media_check.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

std::string job_args(const fs::path& out) {
  return "run -i " + shell_quote(media("tiny_20f.mkv")) + " -o " + shell_quote(out) + " --pipeline " +
         kEarlyStopPipeline + " -c ffv1 --segment-frames " + std::to_string(kEarlyStopSegmentFrames) + " --progress none";
}

struct Frames {
  std::vector<FrameHash> video, audio;
};

Frames frames_of(const fs::path& file) { return {framemd5(file, "0:v", false), framemd5(file, "0:a", true)}; }

const Frames& one_pass() {
  static const Frames frames = [] {
    const fs::path out = temp_dir("early-stops-ref") / "one-pass.mkv";
    const CliResult r = framelift(job_args(out) + " --no-job");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return frames_of(out);
  }();
  return frames;
}

void expect_same(const Frames& got, const Frames& want, const std::string& what) {
  ASSERT_EQ(got.video.size(), want.video.size()) << what << ": frames lost or added";
  for (size_t i = 0; i < want.video.size(); ++i) {
    EXPECT_EQ(got.video[i].md5, want.video[i].md5) << what << ": frame " << i;
    EXPECT_DOUBLE_EQ(got.video[i].pts_s, want.video[i].pts_s) << what << ": frame " << i;
  }
  ASSERT_EQ(got.audio.size(), want.audio.size()) << what << ": audio packets";
  for (size_t i = 0; i < want.audio.size(); ++i) EXPECT_EQ(got.audio[i].md5, want.audio[i].md5) << what << ": audio packet " << i;
}

class EarlyStops : public ::testing::TestWithParam<EarlyStop> {};

TEST_P(EarlyStops, StoppedThereThenTheSameCommandGivesEveryFrame) {
  const auto& [point, signal] = GetParam();
  const Frames& want = one_pass();
  ASSERT_EQ(want.video.size(), size_t(kEarlyStopFrames));
  const std::string what = signal_name(signal) + " at " + point.at + " (" + point.what + ")";
  const fs::path dir = temp_dir("early-stops");
  const fs::path out = dir / "out.mkv";
  std::string log;
  const int rc = run_command(stop_variable(signal) + "=" + point.at + " " + shell_quote(cli_path()) + " " + job_args(out), &log);
  if (signal == StopSignal::Kill) {
    EXPECT_EQ(rc, 128 + 9) << "the point was not reached: " << log;
  } else {
    EXPECT_EQ(rc, 130) << log;
    EXPECT_NE(log.find("stopped by SIGTERM"), std::string::npos) << log;
    // The message says what is kept: a stop before any segment finished removes the folder.
    if (log.find("kept in") != std::string::npos) {
      EXPECT_TRUE(fs::exists(dir / "out.mkv.framelift-job")) << "the message names a folder that is gone: " << log;
    }
  }
  EXPECT_FALSE(fs::exists(out)) << "nothing may appear under the output's name before it is complete";
  const CliResult resumed = framelift(job_args(out));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  expect_same(frames_of(out), want, what);
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename(), "out.mkv") << "left behind: " << entry.path();
}

INSTANTIATE_TEST_SUITE_P(Points, EarlyStops,
                         ::testing::Combine(::testing::ValuesIn(early_points()), ::testing::Values(StopSignal::Kill, StopSignal::Term)),
                         [](const auto& info) { return early_stop_name(info); });

// Stopped as its output goes into place, a job ends complete. A SIGTERM just before the rename
// or just after it (the frames not counted yet) cut the count short: the run exited 130 with the
// complete output under its name and the job folder kept, and the same command then refused that
// name as taken (exit 4). A SIGKILL just after the rename left the same, unrecognisable, as
// assembled.json was written after the rename; it is written just before now (the rename keeps
// the inode), and the same command finishes the job.
TEST(OutputInPlace, StoppedAsTheOutputGoesIntoPlaceTheJobEndsComplete) {
  const Frames& want = one_pass();
  // commit:N counts every rename: job.json, plan.json, then per segment its part file, the
  // segment and its record (3 x 5), assembled.json, and the output's, the 19th.
  struct Case {
    StopSignal signal;
    std::string at;
  };
  for (const Case& c : {Case{StopSignal::Term, "commit:19"}, Case{StopSignal::Term, "assembled:1"},
                        Case{StopSignal::Kill, "assembled:1"}}) {
    const std::string what = signal_name(c.signal) + " at " + c.at;
    SCOPED_TRACE(what);
    const fs::path dir = temp_dir("early-stops-output");
    const fs::path out = dir / "out.mkv";
    std::string log;
    const int rc = run_command(stop_variable(c.signal) + "=" + c.at + " " + shell_quote(cli_path()) + " " + job_args(out), &log);
    if (c.signal == StopSignal::Term) {
      EXPECT_EQ(rc, 0) << "the output was in place: the job must finish " << log;
    } else {
      EXPECT_EQ(rc, 128 + 9) << log;
      const CliResult rerun = framelift(job_args(out));
      ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
      EXPECT_NE(rerun.output.find("assembled by an earlier run"), std::string::npos) << rerun.output;
    }
    ASSERT_TRUE(fs::exists(out)) << log;
    expect_same(frames_of(out), want, what);
    for (const auto& entry : fs::directory_iterator(dir))
      EXPECT_EQ(entry.path().filename(), "out.mkv") << "left behind: " << entry.path();
  }
}

}  // namespace
}  // namespace framelift::test
