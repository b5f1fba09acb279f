// Fault injection in the manner of DuckDB's: every step that makes work durable (writing job.json,
// plan.json and journal records, syncing a file or its folder, renaming a segment or the final
// output into place) is made to fail, one at a time, at every occurrence a run has: the N-th write,
// sync or rename fails with EIO (FRAMELIFT_FAIL_AT, util/crash_point.h), or the process is killed
// just before or just after the N-th rename (FRAMELIFT_CRASH_AT). After each: the run said one line
// naming the output (exit 4) or was killed; nothing wrong is under the final name (absent, or the
// whole result); a result said to be kept somewhere is there and whole; the same command run
// again succeeds with the frames of an undisturbed run and leaves no partial file behind. Both a
// job in three segments and a --no-job run are attacked.
// The default run attacks every third occurrence of each point (the first included): the job's
// sweep alone took two and a half minutes of the suite. FRAMELIFT_FAULTS_ALL=1 attacks every one;
// the `fault_injection_soak` entry (label soak) runs it so.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

struct Mode {
  const char* name;
  const char* args;
  bool job;
  int at_least;  // faults the run has room for (a sanity check on the points)
};

class FaultInjection : public ::testing::TestWithParam<Mode> {};

std::vector<std::string> frames_of(const fs::path& file) {
  std::vector<std::string> md5s;
  for (const FrameHash& h : framemd5(file, "0:v", false)) md5s.push_back(h.md5);
  return md5s;
}

std::vector<std::string> error_lines(const std::string& output) {
  std::vector<std::string> lines;
  static const std::regex line("(^|\n)(error: [^\n]*)");
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it) lines.push_back((*it)[2]);
  return lines;
}

// What the run left that is not the input, the output, the job folder or a kept result.
std::vector<std::string> partials_in(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".partial-") != std::string::npos) found.push_back(e.path().string());
  return found;
}

TEST_P(FaultInjection, EveryWriteSyncAndRenameFailingOrKilledLosesNothing) {
  const Mode mode = GetParam();
  const fs::path dir = temp_dir(std::string("faults-") + mode.name);
  const fs::path in = dir / "in.mkv", out = dir / "out.mkv";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=64x48:rate=24 -frames:v 24 -c:v ffv1 " +
                        shell_quote(in)),
            0);
  const std::string command = shell_quote(cli_path()) + " --log-level warn run -i " + shell_quote(in) + " -o " +
                              shell_quote(out) + " -y -c ffv1 --pipeline resize:scale=0.5 --progress none " + mode.args;
  ASSERT_EQ(run_command(command), 0);
  const std::vector<std::string> reference = frames_of(out);
  ASSERT_EQ(reference.size(), 24u);
  fs::remove(out);

  const char* all = std::getenv("FRAMELIFT_FAULTS_ALL");
  const int stride = all && std::string(all) == "1" ? 1 : 3;
  int attacked = 0;
  for (const std::string variable : {"FRAMELIFT_FAIL_AT", "FRAMELIFT_CRASH_AT"}) {
    const bool kill = variable == "FRAMELIFT_CRASH_AT";
    for (const std::string& point : kill ? std::vector<std::string>{"commit", "committed"}
                                        : std::vector<std::string>{"write", "fsync", "rename"}) {
      // The N-th occurrence, for every N the run reaches: the first N a run survives untouched
      // (exit 0) is past the last occurrence.
      for (int n = 1; n < 60; n += stride) {
        const std::string fault = point + ":" + std::to_string(n);
        SCOPED_TRACE(variable + "=" + fault);
        std::string said;
        const int rc = run_command(variable + "=" + fault + " " + command, &said);
        if (rc == 0) {
          EXPECT_EQ(frames_of(out), reference);
          fs::remove(out);
          break;
        }
        ++attacked;
        if (kill) {
          EXPECT_EQ(rc, 128 + 9) << said;
        } else {
          EXPECT_EQ(rc, 4) << said;
          const auto lines = error_lines(said);
          ASSERT_EQ(lines.size(), 1u) << said;
          EXPECT_NE(lines[0].find(out.string()), std::string::npos) << lines[0];
          static const std::regex kept_as("the finished result was kept as ([^ ;]+)");
          std::smatch m;
          const bool kept_said = std::regex_search(lines[0], m, kept_as);
          // A --no-job run fails only once its file is complete: that work must be somewhere.
          if (!mode.job && !fs::exists(out)) {
            EXPECT_TRUE(kept_said) << "the finished result is gone: " << lines[0];
          }
          if (kept_said) {
            const fs::path kept = m[1].str();
            ASSERT_TRUE(fs::exists(kept)) << lines[0];
            EXPECT_EQ(frames_of(kept), reference) << "the kept result is not the whole result";
            fs::remove(kept);  // the user moves it away
          }
        }
        if (fs::exists(out)) {
          EXPECT_EQ(frames_of(out), reference) << "something else than the result at the output";
        }
        std::string again;
        ASSERT_EQ(run_command(command, &again), 0) << again;
        EXPECT_EQ(frames_of(out), reference);
        EXPECT_EQ(partials_in(dir), std::vector<std::string>{});
        EXPECT_FALSE(fs::exists(dir / "out.mkv.framelift-job")) << "the job folder goes once the output is complete";
        fs::remove(out);
      }
    }
  }
  std::printf("%s: %d injected faults\n", mode.name, attacked);
  EXPECT_GE(attacked, mode.at_least / stride);
}

INSTANTIATE_TEST_SUITE_P(Runs, FaultInjection,
                         ::testing::Values(Mode{"job", "--segment-frames 12", true, 30}, Mode{"nojob", "--no-job", false, 5}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace framelift::test
