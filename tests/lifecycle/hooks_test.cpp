// Hooks and the shutdown command run real /bin/sh children; each test command writes what it saw
// to a file in a temp folder.
#include "lifecycle/hooks.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/test_paths.h"

namespace fs = std::filesystem;
namespace ft = framelift::test;
using namespace framelift::lifecycle;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

HookContext context(JobOutcome outcome, const std::string& error = "") {
  HookContext c;
  c.output = "/videos/out put.mkv";  // a space: the value must arrive as one variable
  c.job_dir = "/jobs/42";
  c.outcome = outcome;
  c.error = error;
  return c;
}

// A command that writes the four variables, one a line, to `file`.
std::string dump_env_to(const fs::path& file) {
  return "printf '%s\\n' \"$FRAMELIFT_OUTPUT\" \"$FRAMELIFT_JOB_DIR\" \"$FRAMELIFT_STATUS\" \"$FRAMELIFT_ERROR\" > '" +
         file.string() + "'";
}

TEST(Hooks, HookSeesTheJobInItsEnvironment) {
  fs::path file = ft::temp_dir("hooks") / "env.txt";
  auto result = run_hook(dump_env_to(file), context(JobOutcome::Failed, "input.mp4: not a video"));
  EXPECT_TRUE(result.ran);
  EXPECT_TRUE(result.ok) << result.problem;
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(read_file(file), "/videos/out put.mkv\n/jobs/42\nfailed\ninput.mp4: not a video\n");
}

TEST(Hooks, JobValuesReplaceInheritedOnesAndTheRestIsKept) {
  fs::path file = ft::temp_dir("hooks") / "env.txt";
  ::setenv("FRAMELIFT_STATUS", "stale", 1);
  ::setenv("FRAMELIFT_HOOK_TEST_KEEP", "kept", 1);
  auto result = run_hook("echo \"$FRAMELIFT_STATUS $FRAMELIFT_HOOK_TEST_KEEP\" > '" + file.string() + "'",
                         context(JobOutcome::Complete));
  ::unsetenv("FRAMELIFT_STATUS");
  ::unsetenv("FRAMELIFT_HOOK_TEST_KEEP");
  EXPECT_TRUE(result.ok) << result.problem;
  EXPECT_EQ(read_file(file), "complete kept\n");
}

TEST(Hooks, NonZeroExitIsAWarningResultNotAnException) {
  auto result = run_hook("exit 3", context(JobOutcome::Complete));
  EXPECT_TRUE(result.ran);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.problem, "exited with status 3");

  result = run_hook("no-such-command-framelift-test", context(JobOutcome::Complete));
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.exit_code, 127);
  EXPECT_NE(result.problem.find("not found"), std::string::npos) << result.problem;
}

TEST(Hooks, KilledHookNamesTheSignal) {
  auto result = run_hook("kill -KILL $$", context(JobOutcome::Complete));
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.exit_code, -1);
  EXPECT_EQ(result.problem, "killed by SIGKILL");
}

TEST(Hooks, HookStartsWithDefaultSignalsWhateverTheJobBlocks) {
  // The job may block SIGTERM in its threads; a hook that inherited the block would ignore it.
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  auto result = run_hook("kill -TERM $$; exit 0", context(JobOutcome::Complete));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  EXPECT_EQ(result.problem, "killed by SIGTERM");
}

TEST(Hooks, HookReadsNothingFromOurStdin) {
  auto result = run_hook("[ \"$(readlink /proc/$$/fd/0)\" = /dev/null ]", context(JobOutcome::Complete));
  EXPECT_TRUE(result.ok) << result.problem;
}

TEST(Hooks, EmptyCommandRunsNothing) {
  auto result = run_hook("", context(JobOutcome::Complete));
  EXPECT_FALSE(result.ran);
}

TEST(Hooks, CompleteRunsOnCompleteOtherwiseOnFail) {
  fs::path dir = ft::temp_dir("hooks");
  LifecycleOptions options;
  options.on_complete = "echo \"$FRAMELIFT_STATUS\" >> '" + (dir / "complete.txt").string() + "'";
  options.on_fail = "echo \"$FRAMELIFT_STATUS\" >> '" + (dir / "fail.txt").string() + "'";
  EXPECT_TRUE(run_job_hook(options, context(JobOutcome::Complete)).ok);
  EXPECT_TRUE(run_job_hook(options, context(JobOutcome::Failed, "boom")).ok);
  EXPECT_TRUE(run_job_hook(options, context(JobOutcome::Interrupted, "preempted")).ok);
  EXPECT_EQ(read_file(dir / "complete.txt"), "complete\n");
  EXPECT_EQ(read_file(dir / "fail.txt"), "failed\ninterrupted\n");

  options.on_fail.clear();
  EXPECT_FALSE(run_job_hook(options, context(JobOutcome::Failed)).ran);
}

TEST(Shutdown, CommandComesFromOptionThenEnvironmentThenDefault) {
  LifecycleOptions options;
  ::unsetenv("FRAMELIFT_SHUTDOWN_COMMAND");
  EXPECT_EQ(resolve_shutdown_command(options), "shutdown -h now");
  ::setenv("FRAMELIFT_SHUTDOWN_COMMAND", "runpodctl stop pod $RUNPOD_POD_ID", 1);
  EXPECT_EQ(resolve_shutdown_command(options), "runpodctl stop pod $RUNPOD_POD_ID");
  options.shutdown_command = "vastai stop instance $CONTAINER_ID";
  EXPECT_EQ(resolve_shutdown_command(options), "vastai stop instance $CONTAINER_ID");
  ::unsetenv("FRAMELIFT_SHUTDOWN_COMMAND");
}

TEST(Shutdown, RunsTheCommandAndReportsFailure) {
  fs::path file = ft::temp_dir("hooks") / "halted";
  auto result = run_shutdown_command("touch '" + file.string() + "'");
  EXPECT_TRUE(result.ok) << result.problem;
  EXPECT_TRUE(fs::exists(file));

  result = run_shutdown_command("echo 'shutdown: must be root' >&2; exit 1");
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.exit_code, 1);
}

}  // namespace
