#include "lifecycle/shell_command.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/str.h"

extern char** environ;

namespace framelift::lifecycle {
namespace {

// RAII for the two posix_spawn attribute objects.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view text(*entry);
    bool replaced = false;
    for (const auto& [name, value] : extra)
      if (text.size() > name.size() && text.substr(0, name.size()) == name && text[name.size()] == '=')
        replaced = true;
    if (!replaced) env.emplace_back(text);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

}  // namespace

CommandResult run_shell_command(const std::string& command,
                                const std::vector<std::pair<std::string, std::string>>& extra_env) {
  CommandResult result;
  result.ran = true;
  std::vector<std::string> env = child_environment(extra_env);
  std::vector<char*> envp;
  for (auto& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string shell = "/bin/sh", dash_c = "-c", text = command;
  char* argv[] = {shell.data(), dash_c.data(), text.data(), nullptr};

  SpawnSetup setup;
  posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // The job may block SIGTERM/SIGINT in its threads (to handle them in one place) and ignore
  // SIGPIPE; a child inherits both, and a hook must behave like a command typed in a shell.
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&setup.attributes, &empty);
  posix_spawnattr_setsigdefault(&setup.attributes, &defaults);
  posix_spawnattr_setflags(&setup.attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  pid_t pid = -1;
  int rc = posix_spawn(&pid, shell.c_str(), &setup.actions, &setup.attributes, argv, envp.data());
  if (rc != 0) {
    result.problem = str("cannot start /bin/sh (", std::strerror(rc), ")");
    return result;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      result.problem = str("lost track of the command (", std::strerror(errno), ")");
      return result;
    }
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
    result.ok = result.exit_code == 0;
    // /bin/sh's own convention for "command not found" and "not executable".
    if (result.exit_code == 127) result.problem = "exited with status 127 (command not found?)";
    else if (result.exit_code == 126) result.problem = "exited with status 126 (not executable?)";
    else if (!result.ok) result.problem = str("exited with status ", result.exit_code);
  } else if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    result.problem = name ? str("killed by SIG", name) : str("killed by signal ", WTERMSIG(status));
  }
  return result;
}

}  // namespace framelift::lifecycle
