#pragma once
// Where accepted connections wait, without a thread each, until they are worth one: a plain
// HTTP connection until its whole request head is in the socket's buffer (looked at with
// MSG_PEEK, so httplib still reads it from the start), a TLS one until its first bytes. A head
// over the size or line limit is answered 431, one that does not arrive within the deadline
// 408, and a connection over the pending caps 503; each then closed. So clients that open
// connections and drip a header line now and then cost the server a file descriptor each,
// not a request thread.
//
// Thread-safety: admit() from any thread; the callback runs on the gate's own thread.
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/http_limits.h"

namespace framelift::server {

class ConnectionGate {
 public:
  using Clock = std::chrono::steady_clock;
  // ready(sock, accepted, address): the connection is the callee's now, still non-blocking.
  using Ready = std::function<void(int sock, Clock::time_point accepted, const std::string& address)>;

  ConnectionGate(const HttpLimits& limits, bool peek_heads, Ready ready);
  ~ConnectionGate();  // stop()
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Takes `sock` (closing it when it is refused).
  void admit(int sock);
  // Closes every waiting connection and ends the thread.
  void stop();

 private:
  struct Pending {
    Clock::time_point accepted;
    std::string address;
  };
  enum class Verdict { Wait, Ready, TooLarge, Closed };

  void loop();
  Verdict look(int sock);
  void drop(int sock, const char* reply);  // under mutex_
  void expire(Clock::time_point now);

  const HttpLimits limits_;
  const bool peek_heads_;
  Ready ready_;
  int epoll_ = -1, wake_ = -1;
  std::mutex mutex_;
  std::map<int, Pending> pending_;
  std::map<std::string, int> per_address_;
  std::vector<char> peek_;
  bool stopping_ = false;
  std::thread thread_;
};

// The peer address of a socket, numeric ("127.0.0.1", "::1"); "" when it has none.
std::string peer_address(int sock);

}  // namespace framelift::server
