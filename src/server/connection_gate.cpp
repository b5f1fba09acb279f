#include "server/connection_gate.h"

#include <fcntl.h>
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/error.h"
#include "util/log.h"

namespace framelift::server {
namespace {

constexpr const char* k408 = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
constexpr const char* k431 = "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
constexpr const char* k503 = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n";

void set_blocking(int sock, bool blocking) {
  const int flags = fcntl(sock, F_GETFL, 0);
  if (flags >= 0) fcntl(sock, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
}

// A last word to a refused client, never waiting for it to read. What it sent and we did not
// read is discarded first (a little of it): closing over unread bytes resets the connection,
// and a reset can overtake the reply.
void refuse(int sock, const char* reply) {
  set_blocking(sock, false);
  if (reply) (void)!send(sock, reply, std::strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
  shutdown(sock, SHUT_WR);
  char sink[16384];
  for (int i = 0; i < 64 && recv(sock, sink, sizeof sink, MSG_DONTWAIT) > 0; ++i) {
  }
  close(sock);
}

}  // namespace

std::string peer_address(int sock) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  char host[NI_MAXHOST] = "";
  if (getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len) != 0 ||
      getnameinfo(reinterpret_cast<sockaddr*>(&a), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0)
    return "";
  return host;
}

ConnectionGate::ConnectionGate(const HttpLimits& limits, bool peek_heads, Ready ready)
    : limits_(limits), peek_heads_(peek_heads), ready_(std::move(ready)), peek_(limits.max_head_bytes) {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_ < 0 || wake_ < 0) throw Error(ErrorKind::Resource, std::string("serve: cannot create the connection gate: ") + std::strerror(errno));
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.fd = wake_;
  epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &e);
  thread_ = std::thread([this] { loop(); });
}

ConnectionGate::~ConnectionGate() {
  stop();
  close(epoll_);
  close(wake_);
}

void ConnectionGate::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  const uint64_t one = 1;
  (void)!::write(wake_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  while (!pending_.empty()) drop(pending_.begin()->first, k503);
}

void ConnectionGate::admit(int sock) {
  const std::string address = peer_address(sock);
  std::lock_guard lock(mutex_);
  if (stopping_ || int(pending_.size()) >= limits_.max_pending || per_address_[address] >= limits_.max_pending_per_address) {
    refuse(sock, k503);
    return;
  }
  set_blocking(sock, false);
  pending_[sock] = {Clock::now(), address};
  ++per_address_[address];
  // Edge-triggered: a head that is still incomplete leaves its bytes in the buffer, which would
  // wake a level-triggered wait at once, over and over.
  epoll_event e{};
  e.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  e.data.fd = sock;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, sock, &e) != 0) drop(sock, k503);
}

void ConnectionGate::drop(int sock, const char* reply) {
  auto it = pending_.find(sock);
  if (it == pending_.end()) return;
  epoll_ctl(epoll_, EPOLL_CTL_DEL, sock, nullptr);
  if (--per_address_[it->second.address] <= 0) per_address_.erase(it->second.address);
  pending_.erase(it);
  refuse(sock, reply);
}

ConnectionGate::Verdict ConnectionGate::look(int sock) {
  if (!peek_heads_) return Verdict::Ready;
  const ssize_t n = recv(sock, peek_.data(), peek_.size(), MSG_PEEK);
  if (n == 0) return Verdict::Closed;
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Verdict::Wait : Verdict::Closed;
  const std::string_view seen(peek_.data(), size_t(n));
  const size_t end = seen.find("\r\n\r\n");
  const std::string_view head = end == std::string_view::npos ? seen : seen.substr(0, end + 4);
  if (std::count(head.begin(), head.end(), '\n') > limits_.max_head_lines) return Verdict::TooLarge;
  if (end != std::string_view::npos) return Verdict::Ready;
  return size_t(n) >= peek_.size() ? Verdict::TooLarge : Verdict::Wait;
}

void ConnectionGate::expire(Clock::time_point now) {
  std::vector<int> late;
  for (const auto& [sock, p] : pending_)
    if (now - p.accepted > limits_.head_deadline) late.push_back(sock);
  for (int sock : late) drop(sock, k408);
}

void ConnectionGate::loop() {
  epoll_event events[64];
  for (;;) {
    const int n = epoll_wait(epoll_, events, 64, 200);
    std::vector<std::pair<int, Pending>> ready;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      for (int i = 0; i < n; ++i) {
        const int sock = events[i].data.fd;
        if (sock == wake_ || !pending_.count(sock)) continue;
        const Verdict v = look(sock);
        const bool hung_up = events[i].events & (EPOLLHUP | EPOLLERR);
        if (v == Verdict::Ready) {
          epoll_ctl(epoll_, EPOLL_CTL_DEL, sock, nullptr);
          Pending p = pending_[sock];
          if (--per_address_[p.address] <= 0) per_address_.erase(p.address);
          pending_.erase(sock);
          ready.emplace_back(sock, std::move(p));
        } else if (v == Verdict::TooLarge) {
          drop(sock, k431);
        } else if (v == Verdict::Closed || hung_up) {
          drop(sock, nullptr);
        }
      }
      expire(Clock::now());
    }
    for (auto& [sock, p] : ready) {
      try {
        ready_(sock, p.accepted, p.address);
      } catch (const std::exception& e) {
        log::error("serve: a connection could not be handed on: ", e.what());
        refuse(sock, k503);
      }
    }
  }
}

}  // namespace framelift::server
