#pragma once
// Runs one user command through /bin/sh -c and waits for it: posix_spawn, not std::system, so that
// the environment can be extended without touching our own, the child starts with default signal
// handling and an empty signal mask whatever the job's threads block, and stdin is /dev/null.
#include <string>
#include <utility>
#include <vector>

#include "lifecycle/hooks.h"

namespace framelift::lifecycle {

// `extra_env` entries replace variables of the same name in our environment. Never throws;
// `problem` in the result says what went wrong.
CommandResult run_shell_command(const std::string& command,
                                const std::vector<std::pair<std::string, std::string>>& extra_env);

}  // namespace framelift::lifecycle
