// SIGTERM (what a spot reclaim, Slurm or Kubernetes sends first) is honoured within 3 s at every
// blocking point, here the worst ones: a FIFO input nobody ever opens for writing (open() blocks)
// and one whose writer never writes (read() blocks). A job, which reads its input once per
// segment, refuses a FIFO at once.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "cli/cli_runner.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

struct Stopped {
  int exit_code;
  double seconds;  // from SIGTERM to exit
  std::string log;
};

// Starts a plain run on `fifo`, sends SIGTERM once it waits on the FIFO, and times the exit.
// "Waits": the FIFO is among its open files (up to 20 s, for a loaded machine: before main()
// installs its handler, SIGTERM would just kill it), plus half a second to be deep in the wait.
// An open() that blocks never gets there; SIGTERM then goes after the 20 s. `writer` is a shell
// command started first in the background (or empty).
Stopped sigterm_once_waiting(const fs::path& dir, const fs::path& fifo, const std::string& writer) {
  const std::string script =
      (writer.empty() ? "" : writer + " 2>/dev/null & w=$!; ") + shell_quote(cli_path()) + " run --no-job -i " + shell_quote(fifo) +
      " -o " + shell_quote(dir / "out.mkv") + " --progress none > " + shell_quote(dir / "log") + " 2>&1 & p=$!; " +
      "i=0; while [ $i -lt 2000 ] && ! ls -l /proc/$p/fd 2>/dev/null | grep -q " + shell_quote(fifo.filename()) +
      "; do sleep 0.01; i=$((i+1)); done; sleep 0.5; t0=$(date +%s%N); kill -TERM $p; ( sleep 10; kill -KILL $p ) >/dev/null 2>&1 & k=$!; wait $p; rc=$?; "
      "kill $k 2>/dev/null; t1=$(date +%s%N); " +
      (writer.empty() ? "" : "kill $w 2>/dev/null; ") + "echo \"$rc $(( (t1 - t0) / 1000000 ))\"";
  std::string said;
  run_command(script, &said);
  Stopped s{-1, -1, read(dir / "log")};
  std::sscanf(said.c_str(), "%d %lf", &s.exit_code, &s.seconds);
  s.seconds /= 1000;
  return s;
}

TEST(FifoStop, SigtermWhileOpeningAFifoNobodyWritesStopsWithinThreeSeconds) {
  const fs::path dir = temp_dir("fifo-open");
  ASSERT_EQ(::mkfifo((dir / "in.mkv").c_str(), 0600), 0);
  const Stopped s = sigterm_once_waiting(dir, dir / "in.mkv", "");
  EXPECT_EQ(s.exit_code, 130) << s.log;
  EXPECT_GE(s.seconds, 0) << s.log;
  EXPECT_LT(s.seconds, 3.0) << s.log;
  EXPECT_NE(s.log.find("SIGTERM"), std::string::npos) << s.log;
  EXPECT_FALSE(fs::exists(dir / "out.mkv"));
}

TEST(FifoStop, SigtermWhileReadingAFifoWhoseWriterIsSilentStopsWithinThreeSeconds) {
  const fs::path dir = temp_dir("fifo-read");
  ASSERT_EQ(::mkfifo((dir / "in.mkv").c_str(), 0600), 0);
  // Holds the FIFO open for writing and never writes.
  const Stopped s = sigterm_once_waiting(dir, dir / "in.mkv", "sleep 30 > " + shell_quote(dir / "in.mkv"));
  EXPECT_EQ(s.exit_code, 130) << s.log;
  EXPECT_GE(s.seconds, 0) << s.log;
  EXPECT_LT(s.seconds, 3.0) << s.log;
  EXPECT_FALSE(fs::exists(dir / "out.mkv"));
}

TEST(FifoStop, AJobRefusesAFifoBeforeWaitingOnIt) {
  const fs::path dir = temp_dir("fifo-job");
  ASSERT_EQ(::mkfifo((dir / "in.mkv").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  CliResult r;
  r.exit_code = run_command("timeout -s KILL 20 " + shell_quote(cli_path()) + " run -i " + shell_quote(dir / "in.mkv") +
                                " -o " + shell_quote(dir / "out.mkv") + " --progress none",
                            &r.output);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("in.mkv: is a FIFO"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--no-job"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace framelift::test
