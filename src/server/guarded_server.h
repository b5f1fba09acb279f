#pragma once
// httplib's routing and response writing on a transport of our own (docs/server.md, "The HTTP
// layer"): httplib's accept loop hands each socket to a ConnectionGate, which holds it without
// a thread until its head has arrived; then one of `threads` request threads reads it through a
// ConnectionStream (deadlines, head limits, TLS) and lets httplib answer it, one request per
// connection, so every request passes the gate. Debian's cpp-httplib 0.11 has none of these
// bounds itself (no header count limit, a read timeout per recv only, one pool thread per open
// connection); this keeps its routing, which the rest of the server is written against.
//
// Thread-safety: configure (routes, handlers) before listen; stop() and close() from one thread.
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/connection_gate.h"
#include "server/http_limits.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace framelift::server {

class GuardedServer final : public httplib::Server {
 public:
  // tls_cert and tls_key: PEM files, both or neither. Throws Error(Usage) naming a file that is
  // missing or not a certificate and its key.
  GuardedServer(const HttpLimits& limits, const std::string& tls_cert, const std::string& tls_key);
  ~GuardedServer() override;  // close()

  // After httplib's stop(): waiting connections are closed, running requests finish.
  void close();

  const HttpLimits& limits() const { return limits_; }

 private:
  // httplib calls this for every accepted socket (on its accept thread, through an inline task
  // queue): the socket goes to the gate.
  bool process_and_close_socket(int sock) override;
  void hand_on(int sock, std::chrono::steady_clock::time_point accepted, const std::string& address);
  void worker();
  void answer(int sock, std::chrono::steady_clock::time_point accepted);

  struct Task {
    int sock;
    std::chrono::steady_clock::time_point accepted;
    std::string address;
  };

  const HttpLimits limits_;
  SSL_CTX* tls_ = nullptr;
  std::mutex mutex_;
  std::condition_variable work_;
  std::deque<Task> queue_;
  std::map<std::string, int> active_per_address_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
  std::unique_ptr<ConnectionGate> gate_;
};

// Event streams and downloads hold a request thread for as long as the client reads. A slot
// counts one, per user and in all; a request that finds none is answered 429, so such responses
// never take more than half the request threads, nor one user all of that.
//
// Thread-safety: any thread.
class LongResponses {
 public:
  LongResponses(int per_user, int total) : per_user_(per_user), total_(total) {}
  // A held slot (released when the last copy is destroyed), or nullptr when none is free.
  std::shared_ptr<void> acquire(int64_t user);

 private:
  std::mutex mutex_;
  int per_user_, total_, held_ = 0;
  std::map<int64_t, int> by_user_;
};

}  // namespace framelift::server
