#pragma once
// A real `framelift serve` process on a free loopback port for the server tests: started with
// fork/exec, its output in a log file, its URL read from the line it prints once listening.
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace framelift::test {

class ServerProcess {
 public:
  // `args` after `framelift serve`; `env` is added to the child's environment.
  ServerProcess(const std::vector<std::string>& args, const std::filesystem::path& log,
                const std::map<std::string, std::string>& env = {});
  ~ServerProcess();  // SIGTERM, then waits
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  const std::string& url() const { return url_; }  // "" when it never listened (see log())
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string log() const;
  // Sends `signal` and waits for the process: its wait status (exit code, or 128 + signal).
  int stop(int signal);
  // Waits up to `seconds` for the process to end by itself: its wait status as stop() gives it,
  // or -1 when it is still running then (it is left running).
  int wait_for_exit(int seconds);

 private:
  pid_t pid_ = -1;
  std::filesystem::path log_;
  std::string url_;
  int port_ = 0;
};

}  // namespace framelift::test
