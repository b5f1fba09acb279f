#include "local_http_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "support/test_paths.h"

extern char** environ;

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  }
  ~Pipe() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
  void close_write() {
    ::close(fds[1]);
    fds[1] = -1;
  }
};

// Reads the first line the server prints, waiting at most `timeout_ms` in total.
std::string read_line(int fd, int timeout_ms) {
  std::string line;
  char c;
  while (true) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) throw std::runtime_error("http_server.py printed no port in time");
    ssize_t n = ::read(fd, &c, 1);
    if (n <= 0) throw std::runtime_error("http_server.py exited before printing its port");
    if (c == '\n') return line;
    line += c;
  }
}

}  // namespace

LocalHttpServer::LocalHttpServer(const fs::path& root, const std::vector<std::string>& switches) {
  log_ = temp_dir("http-log") / "requests.log";
  // Debian's interpreter when there is one: a python3 found first on PATH may be a version-manager
  // shim that costs a second per start.
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::vector<std::string> args = {python, (source_dir() / "tests/support/http_server.py").string(),
                                   "--root", root.string(), "--log", log_.string()};
  args.insert(args.end(), switches.begin(), switches.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  Pipe out;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.fds[1], STDOUT_FILENO);
  int rc = posix_spawnp(&process_.pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start python3 for http_server.py");
  out.close_write();
  port_ = std::stoi(read_line(out.fds[0], 10000));
}

LocalHttpServer::Process::~Process() {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  int status;
  ::waitpid(pid, &status, 0);
}

std::string LocalHttpServer::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
}

std::string LocalHttpServer::request_log() const {
  std::ifstream in(log_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace framelift::test
