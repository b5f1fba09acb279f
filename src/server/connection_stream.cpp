#include "server/connection_stream.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace framelift::server {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// What a request head says of its body: whether it announces one (Content-Length or
// Transfer-Encoding) and the Content-Length (0 without one, or one that is not a number: httplib
// then refuses the request itself). A head that announces none has no body (RFC 9112, 6.3):
// `curl -X POST` sends such a head, and httplib would otherwise read the socket until the client
// hangs up, which it never does while it waits for the answer.
struct BodyFraming {
  bool announced = false;
  size_t length = 0;
};

BodyFraming body_framing(const std::string& head) {
  const std::string h = lower(head);
  BodyFraming f;
  f.announced = h.find("\r\ntransfer-encoding:") != std::string::npos;
  const size_t at = h.find("\r\ncontent-length:");
  if (at == std::string::npos) return f;
  f.announced = true;
  const char* p = h.c_str() + at + 17;
  while (*p == ' ' || *p == '\t') ++p;
  f.length = size_t(std::strtoull(p, nullptr, 10));
  return f;
}

void address_of(const sockaddr_storage& a, socklen_t len, std::string& ip, int& port) {
  char host[NI_MAXHOST] = "", serv[NI_MAXSERV] = "";
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

}  // namespace

ConnectionStream::ConnectionStream(int sock, SSL* tls, const HttpLimits& limits, Clock::time_point accepted)
    : sock_(sock), tls_(tls), limits_(limits), accepted_(accepted) {}

ssize_t ConnectionStream::fail(const std::string& why) {
  if (failure_.empty()) failure_ = why;
  return -1;
}

bool ConnectionStream::wait(Want want, Clock::time_point deadline) {
  const auto now = Clock::now();
  if (now >= deadline) return false;
  const auto left = std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now), limits_.idle_timeout);
  pollfd p{sock_, short(want == Want::Read ? POLLIN : POLLOUT), 0};
  int r;
  do r = poll(&p, 1, int(std::max<int64_t>(1, left.count())));
  while (r < 0 && errno == EINTR);
  return r > 0 && !(p.revents & (POLLERR | POLLNVAL));
}

ConnectionStream::Clock::time_point ConnectionStream::read_deadline() const {
  return head_done_ ? body_deadline_ : accepted_ + limits_.head_deadline;
}

bool ConnectionStream::handshake() {
  if (!tls_) return true;
  const auto deadline = accepted_ + limits_.head_deadline;
  for (;;) {
    const int r = SSL_accept(tls_);
    if (r == 1) return true;
    const int e = SSL_get_error(tls_, r);
    if (e == SSL_ERROR_WANT_READ ? !wait(Want::Read, deadline) : e == SSL_ERROR_WANT_WRITE ? !wait(Want::Write, deadline) : true) {
      fail("the TLS handshake failed or did not finish in time");
      return false;
    }
  }
}

void ConnectionStream::watch_head(const char* data, size_t n) {
  if (head_done_) return;
  head_.append(data, n);
  const size_t end = head_.find("\r\n\r\n");
  if (end == std::string::npos) return;
  head_.resize(end + 4);
  head_done_ = true;
  const BodyFraming body = body_framing(head_);
  bodiless_ = !body.announced;
  const double seconds = double(body.length) / double(std::max<size_t>(1, limits_.min_body_bytes_per_second));
  body_deadline_ = Clock::now() + limits_.body_grace + std::chrono::milliseconds(int64_t(std::min(seconds, 1e7) * 1000));
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (head_done_ && bodiless_) return 0;  // the end of a body the head did not announce
  if (!head_done_) {
    if (head_.size() >= limits_.max_head_bytes) return fail("the request head is over the size limit");
    if (std::count(head_.begin(), head_.end(), '\n') > limits_.max_head_lines) return fail("the request head has too many lines");
    // Never read past what the head may still be: the line reader asks for one byte at a time.
    size = std::min(size, limits_.max_head_bytes - head_.size());
  }
  for (;;) {
    ssize_t n;
    bool want_write = false;
    if (tls_) {
      n = SSL_read(tls_, ptr, int(std::min<size_t>(size, 1 << 30)));
      if (n <= 0) {
        const int e = SSL_get_error(tls_, int(n));
        if (e == SSL_ERROR_ZERO_RETURN) return 0;
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return fail("TLS read failed");
        want_write = e == SSL_ERROR_WANT_WRITE;
      }
    } else {
      n = recv(sock_, ptr, size, 0);
      if (n == 0) return 0;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return fail(std::strerror(errno));
    }
    if (n > 0) {
      watch_head(ptr, size_t(n));
      return n;
    }
    if (!wait(want_write ? Want::Write : Want::Read, read_deadline()))
      return fail(head_done_ ? "the request body did not arrive in time" : "the request head did not arrive in time");
  }
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n;
    bool want_read = false;
    if (tls_) {
      n = SSL_write(tls_, ptr + done, int(std::min<size_t>(size - done, 1 << 30)));
      if (n <= 0) {
        const int e = SSL_get_error(tls_, int(n));
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return fail("TLS write failed");
        want_read = e == SSL_ERROR_WANT_READ;
      }
    } else {
      n = send(sock_, ptr + done, size - done, MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return fail(std::strerror(errno));
    }
    if (n > 0) {
      done += size_t(n);
      continue;
    }
    // A reader that takes nothing for idle_timeout is gone, or holding the thread on purpose.
    if (!wait(want_read ? Want::Read : Want::Write, Clock::now() + limits_.idle_timeout)) return fail("the client stopped reading");
  }
  return ssize_t(size);
}

bool ConnectionStream::is_readable() const {
  if (tls_ && SSL_pending(tls_) > 0) return true;
  pollfd p{sock_, POLLIN, 0};
  return poll(&p, 1, int(limits_.idle_timeout.count())) > 0;
}

// Asked between the pieces of a long response: a peer that closed its side (POLLRDHUP) is gone
// for an event stream or a download, and noticing it before the next write frees its slot.
bool ConnectionStream::is_writable() const {
  pollfd p{sock_, short(POLLOUT | POLLRDHUP), 0};
  return poll(&p, 1, int(limits_.idle_timeout.count())) > 0 && !(p.revents & (POLLERR | POLLHUP | POLLNVAL | POLLRDHUP));
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getpeername(sock_, reinterpret_cast<sockaddr*>(&a), &len) == 0) address_of(a, len, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getsockname(sock_, reinterpret_cast<sockaddr*>(&a), &len) == 0) address_of(a, len, ip, port);
}

}  // namespace framelift::server
