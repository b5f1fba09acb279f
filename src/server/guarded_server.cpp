#include "server/guarded_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "server/connection_stream.h"
#include "server/serve.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::server {
namespace {

// httplib's accept loop asks for a task queue; ours runs the task on the spot, which hands the
// socket to the gate and returns: accepting never waits for a request thread.
class InlineQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

SSL_CTX* tls_context(const std::string& cert, const std::string& key) {
  if (cert.empty() && key.empty()) return nullptr;
  if (cert.empty() || key.empty()) throw Error(ErrorKind::Usage, "--tls-cert and --tls-key go together");
  for (const std::string& f : {cert, key})
    if (!std::filesystem::is_regular_file(f)) throw Error(ErrorKind::Usage, str(f, ": no such certificate or key file"));
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) throw Error(ErrorKind::Resource, "serve: OpenSSL cannot make a TLS context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) != 1 || SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    SSL_CTX_free(ctx);
    ERR_clear_error();
    throw Error(ErrorKind::Usage, str(cert, ", ", key, ": not a PEM certificate and its private key"));
  }
  return ctx;
}

constexpr const char* k503 = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n";

void close_socket(int sock, const char* reply = nullptr) {
  if (reply) (void)!send(sock, reply, std::strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
  shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

}  // namespace

GuardedServer::GuardedServer(const HttpLimits& limits, const std::string& tls_cert, const std::string& tls_key)
    : limits_(limits), tls_(tls_context(tls_cert, tls_key)) {
  new_task_queue = [] { return new InlineQueue(); };
  gate_ = std::make_unique<ConnectionGate>(limits_, /*peek_heads=*/tls_ == nullptr,
                                           [this](int sock, auto accepted, const std::string& address) { hand_on(sock, accepted, address); });
  for (int i = 0; i < limits_.threads; ++i) threads_.emplace_back([this] { worker(); });
}

GuardedServer::~GuardedServer() {
  close();
  if (tls_) SSL_CTX_free(tls_);
}

void GuardedServer::close() {
  if (gate_) gate_->stop();
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  std::lock_guard lock(mutex_);
  for (const Task& t : queue_) close_socket(t.sock, k503);
  queue_.clear();
}

bool GuardedServer::process_and_close_socket(int sock) {
  gate_->admit(sock);
  return true;
}

void GuardedServer::hand_on(int sock, std::chrono::steady_clock::time_point accepted, const std::string& address) {
  {
    std::lock_guard lock(mutex_);
    // Loopback clients all arrive as one address through `ssh -L`: a cap there would let one
    // local process shut out every user, so it applies to other addresses only.
    const bool capped = !is_loopback(address) && active_per_address_[address] >= limits_.max_active_per_address;
    if (!closing_ && !capped && int(queue_.size()) < limits_.max_pending) {
      ++active_per_address_[address];
      queue_.push_back({sock, accepted, address});
      work_.notify_one();
      return;
    }
  }
  close_socket(sock, k503);
}

void GuardedServer::worker() {
  for (;;) {
    Task t;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      if (closing_) return;
      t = std::move(queue_.front());
      queue_.pop_front();
    }
    answer(t.sock, t.accepted);
    std::lock_guard lock(mutex_);
    if (--active_per_address_[t.address] <= 0) active_per_address_.erase(t.address);
  }
}

void GuardedServer::answer(int sock, std::chrono::steady_clock::time_point accepted) {
  const int one = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  SSL* ssl = nullptr;
  if (tls_) {
    ssl = SSL_new(tls_);
    if (!ssl || SSL_set_fd(ssl, sock) != 1) {
      if (ssl) SSL_free(ssl);
      return close_socket(sock);
    }
  }
  ConnectionStream stream(sock, ssl, limits_, accepted);
  try {
    bool closed = false;
    if (stream.handshake()) process_request(stream, /*close_connection=*/true, closed, nullptr);
  } catch (const std::exception& e) {
    log::error("serve: a request failed outside its handler: ", e.what());
  }
  if (!stream.failure().empty()) log::debug("serve: connection ended: ", stream.failure());
  if (ssl) {
    SSL_shutdown(ssl);
    SSL_free(ssl);
    ERR_clear_error();
  }
  close_socket(sock);
}

std::shared_ptr<void> LongResponses::acquire(int64_t user) {
  std::lock_guard lock(mutex_);
  if (held_ >= total_ || by_user_[user] >= per_user_) return nullptr;
  ++held_;
  ++by_user_[user];
  // Not null, so that a caller can tell a slot from none; nothing is owned.
  return std::shared_ptr<void>(static_cast<void*>(this), [this, user](void*) {
    std::lock_guard lock(mutex_);
    --held_;
    if (--by_user_[user] <= 0) by_user_.erase(user);
  });
}

}  // namespace framelift::server
