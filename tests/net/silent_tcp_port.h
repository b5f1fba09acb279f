#pragma once
// Local TCP ports that misbehave the way absent metadata services do, for request timeout and
// cancel tests: one where nothing listens (refused at once), and one that accepts connections
// into its backlog but never answers (a request hangs until its timeout or cancel).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace framelift::test {

class SilentTcpPort {
 public:
  // listening: accept into the backlog, never answer; otherwise bind a port and release it, so
  // that a connection to it is refused.
  explicit SilentTcpPort(bool listening) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0)
      throw std::runtime_error("bind failed");
    port_ = ntohs(address.sin_port);
    if (listening) {
      if (::listen(fd_, 16) != 0) throw std::runtime_error("listen failed");
    } else {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~SilentTcpPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  SilentTcpPort(const SilentTcpPort&) = delete;
  SilentTcpPort& operator=(const SilentTcpPort&) = delete;

  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace framelift::test
