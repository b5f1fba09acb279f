// Issue 29, through the library: a job that framelift::run() makes, stopped at each early point
// of it (tests/support/early_stops.h) by SIGKILL and by the library's own stop, its cancel
// callback, then resumed with Job::open().work() and assemble(), ends with every frame of one
// plain pass (as_job = false) of the same request. The stops need a process of their own: the
// job runs in tests/api/stop_child.cpp, an embedder of libframelift.so, and the points are
// reached there through FRAMELIFT_CRASH_AT and FRAMELIFT_STOP_AT (util/crash_point.h).
#include <gtest/gtest.h>

#include <framelift/framelift.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/early_stops.h"
#include "support/test_paths.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

// The decoded frames' md5 of the file's video, in order (the ffmpeg CLI's framemd5: Debian's
// ffmpeg, not framelift's reader).
std::vector<std::string> frame_md5s(const fs::path& file) {
  std::string text;
  EXPECT_EQ(run_command("ffmpeg -v error -i " + quote(file) + " -map 0:v -f framemd5 -", &text), 0) << text;
  std::vector<std::string> md5s;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    md5s.push_back(line.substr(line.rfind(',') + 1));
  }
  return md5s;
}

const std::vector<std::string>& one_pass() {
  static const std::vector<std::string> md5s = [] {
    framelift::RunRequest r;
    r.input = media("tiny_20f.mkv").string();
    r.output = (temp_dir("api-early-ref") / "one-pass.mkv").string();
    r.pipeline = kEarlyStopPipeline;
    r.codec = "ffv1";
    r.as_job = false;
    framelift::run(r);
    return frame_md5s(r.output);
  }();
  return md5s;
}

int child(const std::string& how, const std::string& mode, const fs::path& dir, std::string* log) {
  return run_command(how + " " + quote(FRAMELIFT_STOP_CHILD) + " " + mode + " " + quote(media("tiny_20f.mkv")) + " " +
                         quote(dir / "out.mkv") + " " + quote(dir / "job"),
                     log);
}

// SIGTERM, in the child, is its cancel callback answering true at the point.
class ApiEarlyStops : public ::testing::TestWithParam<EarlyStop> {};

TEST_P(ApiEarlyStops, StoppedThereThenJobOpenWorkAssembleGivesEveryFrame) {
  const auto& [point, signal] = GetParam();
  const std::vector<std::string>& want = one_pass();
  ASSERT_EQ(want.size(), size_t(kEarlyStopFrames));
  const std::string what = (signal == StopSignal::Kill ? "SIGKILL" : "a cancel") + std::string(" at ") + point.at + " (" +
                           point.what + ")";
  const fs::path dir = temp_dir("api-early-stops");
  std::string log;
  const int rc = child(stop_variable(signal) + "=" + point.at, "start", dir, &log);
  EXPECT_EQ(rc, signal == StopSignal::Kill ? 128 + 9 : 130) << "the point was not reached: " << log;
  EXPECT_FALSE(fs::exists(dir / "out.mkv")) << "nothing may appear under the output's name before it is complete";
  const int resumed = child("", "resume", dir, &log);
  ASSERT_EQ(resumed, 0) << log;
  const std::vector<std::string> got = frame_md5s(dir / "out.mkv");
  ASSERT_EQ(got.size(), want.size()) << what << ": frames lost or added\n" << log;
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << what << ": frame " << i;
}

INSTANTIATE_TEST_SUITE_P(Points, ApiEarlyStops,
                         ::testing::Combine(::testing::ValuesIn(early_points()), ::testing::Values(StopSignal::Kill, StopSignal::Term)),
                         [](const auto& info) { return early_stop_name(info); });

}  // namespace
}  // namespace framelift::test
