#include "lifecycle/hooks.h"

#include <cstdlib>

#include "lifecycle/shell_command.h"
#include "util/log.h"

namespace framelift::lifecycle {

const char* job_outcome_name(JobOutcome outcome) {
  switch (outcome) {
    case JobOutcome::Complete: return "complete";
    case JobOutcome::Failed: return "failed";
    case JobOutcome::Interrupted: return "interrupted";
  }
  return "failed";
}

CommandResult run_hook(const std::string& command, const HookContext& context) {
  if (command.empty()) return {};
  log::debug("running hook: ", command);
  CommandResult result = run_shell_command(command, {
                                                        {"FRAMELIFT_OUTPUT", context.output.string()},
                                                        {"FRAMELIFT_JOB_DIR", context.job_dir.string()},
                                                        {"FRAMELIFT_STATUS", job_outcome_name(context.outcome)},
                                                        {"FRAMELIFT_ERROR", context.error},
                                                    });
  if (!result.ok) log::warn("hook '", command, "' ", result.problem, " (the job itself is ", job_outcome_name(context.outcome), ")");
  return result;
}

CommandResult run_job_hook(const LifecycleOptions& options, const HookContext& context) {
  return run_hook(context.outcome == JobOutcome::Complete ? options.on_complete : options.on_fail, context);
}

std::string resolve_shutdown_command(const LifecycleOptions& options) {
  if (!options.shutdown_command.empty()) return options.shutdown_command;
  if (const char* env = std::getenv("FRAMELIFT_SHUTDOWN_COMMAND"); env && *env) return env;
  return "shutdown -h now";
}

CommandResult run_shutdown_command(const std::string& command) {
  if (command.empty()) return {};
  log::info("output complete; shutting the machine down: ", command);
  CommandResult result = run_shell_command(command, {});
  if (!result.ok)
    log::warn("shutdown command '", command, "' ", result.problem, "; the machine keeps running (and billing)");
  return result;
}

}  // namespace framelift::lifecycle
