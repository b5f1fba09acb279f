#pragma once
// One accepted connection as httplib reads and writes it: a non-blocking socket, optionally
// under TLS, where every read and write waits with a deadline. It keeps the request head to the
// limits (size, lines, time from accept) while it passes through, and then gives the body until
// a deadline set from its Content-Length, so a client that drips bytes is cut off however slowly
// it sends them. A head with neither Content-Length nor Transfer-Encoding has no body: reads end
// right after it (one request a connection, so nothing follows).
//
// Thread-safety: one thread at a time (the request's).
#include <httplib.h>
#include <openssl/ssl.h>

#include <chrono>
#include <string>

#include "server/http_limits.h"

namespace framelift::server {

class ConnectionStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;
  // Takes neither the socket nor the SSL object: the caller closes them after the request.
  ConnectionStream(int sock, SSL* tls, const HttpLimits& limits, Clock::time_point accepted);

  // Completes the TLS handshake within the head deadline (a no-op without TLS).
  bool handshake();

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return sock_; }

  // Why the stream gave up, for the log ("" while it has not).
  const std::string& failure() const { return failure_; }

 private:
  enum class Want { Read, Write };
  bool wait(Want want, Clock::time_point deadline);
  Clock::time_point read_deadline() const;
  void watch_head(const char* data, size_t n);
  ssize_t fail(const std::string& why);

  int sock_;
  SSL* tls_;
  const HttpLimits& limits_;
  Clock::time_point accepted_;
  bool head_done_ = false;
  bool bodiless_ = false;  // the head announced no body: reads end after it
  std::string head_;  // the head so far (at most max_head_bytes)
  Clock::time_point body_deadline_{};
  std::string failure_;
};

}  // namespace framelift::server
