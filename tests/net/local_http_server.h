#pragma once
// Runs tests/support/http_server.py for one test: started in the constructor (which waits for the
// port the server prints), killed and reaped in the destructor, so no server outlives its test.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace framelift::test {

class LocalHttpServer {
 public:
  // Serves the files under `root`; `switches` are extra http_server.py flags ("--ignore-range").
  explicit LocalHttpServer(const std::filesystem::path& root, const std::vector<std::string>& switches = {});

  int port() const { return port_; }
  std::string url(const std::string& path) const;  // http://127.0.0.1:PORT/path
  std::string request_log() const;                 // one line per request: METHOD PATH range=...

 private:
  // Owns the server process: killed and reaped on destruction, also when the constructor throws.
  struct Process {
    pid_t pid = -1;
    Process() = default;
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;
    ~Process();
  };
  Process process_;
  int port_ = 0;
  std::filesystem::path log_;
};

}  // namespace framelift::test
