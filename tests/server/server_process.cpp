#include "server/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/test_paths.h"

namespace framelift::test {

ServerProcess::ServerProcess(const std::vector<std::string>& args, const std::filesystem::path& log,
                             const std::map<std::string, std::string>& env)
    : log_(log) {
  std::vector<std::string> argv_s = {cli_path().string(), "serve"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  const std::string marker = "framelift serve: listening on ";
  for (int i = 0; i < 200 && url_.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::string text = this->log();
    const size_t at = text.rfind(marker);
    if (at != std::string::npos) {
      const size_t end = text.find('\n', at);
      if (end == std::string::npos) continue;
      url_ = text.substr(at + marker.size(), end - at - marker.size());
      port_ = std::stoi(url_.substr(url_.rfind(':') + 1));
    }
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
  }
}

ServerProcess::~ServerProcess() { stop(SIGTERM); }

std::string ServerProcess::log() const {
  std::ifstream in(log_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {

int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

int ServerProcess::stop(int signal) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return exit_code_of(status);
}

int ServerProcess::wait_for_exit(int seconds) {
  if (pid_ <= 0) return -1;
  for (int i = 0; i < seconds * 20; ++i) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return exit_code_of(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

}  // namespace framelift::test
