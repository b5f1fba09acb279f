#pragma once
// The user's commands at the end of a job, and the machine's shutdown after it.
//
// --on-complete CMD / --on-fail CMD run through /bin/sh -c with the job's environment plus:
//   FRAMELIFT_OUTPUT    the output file
//   FRAMELIFT_JOB_DIR   the job folder (plan, journal, segments)
//   FRAMELIFT_STATUS    complete | failed | interrupted
//   FRAMELIFT_ERROR     the error message (failed, interrupted); empty on complete
// stdin is /dev/null, stdout and stderr are framelift's. A hook that cannot start or exits
// non-zero is logged as a warning; it never changes the job's own result or exit code.
//
// --shutdown-when-done runs a shutdown command once the output is complete and verified (the
// caller's duty: never after a failure, never before the final rename). Examples:
//   shutdown -h now                         a VM where framelift runs as root (the default)
//   runpodctl stop pod $RUNPOD_POD_ID       RunPod: stops the pod (its volume stays, and bills)
//   vastai stop instance $CONTAINER_ID      Vast.ai: the instance's id is in CONTAINER_ID
// Commands run through /bin/sh, so $VARIABLES expand in the hook's environment.
// Thread-safety: any thread; each call waits for its own child only.
#include <filesystem>
#include <string>

#include "lifecycle/lifecycle_options.h"

namespace framelift::lifecycle {

enum class JobOutcome { Complete, Failed, Interrupted };

// "complete" | "failed" | "interrupted", as FRAMELIFT_STATUS spells it.
const char* job_outcome_name(JobOutcome outcome);

struct HookContext {
  std::filesystem::path output;
  std::filesystem::path job_dir;
  JobOutcome outcome = JobOutcome::Complete;
  std::string error;  // what stopped the job; empty when complete
};

struct CommandResult {
  bool ran = false;    // false: nothing to run (empty command)
  bool ok = false;     // started and exited with status 0
  int exit_code = -1;  // the exit status; -1 when killed by a signal or never started
  std::string problem; // for the log when !ok: "exited with status 3", "killed by SIGKILL", "cannot start /bin/sh (...)"
};

// Runs `command` (/bin/sh -c) with the FRAMELIFT_* variables above and waits for it. Never throws
// for the command's own failure; a failure is logged once as a warning and returned.
CommandResult run_hook(const std::string& command, const HookContext& context);

// on_complete for Complete, on_fail for Failed and Interrupted; {} (ran = false) when that one is
// empty.
CommandResult run_job_hook(const LifecycleOptions& options, const HookContext& context);

// The command --shutdown-when-done runs: options.shutdown_command, else
// $FRAMELIFT_SHUTDOWN_COMMAND, else "shutdown -h now".
std::string resolve_shutdown_command(const LifecycleOptions& options);

// Logs the command, runs it and waits. A failure (not root, no runpodctl) is a warning: the
// output is already safe, only the machine keeps running (and billing).
CommandResult run_shutdown_command(const std::string& command);

}  // namespace framelift::lifecycle
