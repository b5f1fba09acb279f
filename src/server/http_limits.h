#pragma once
// What one HTTP client may cost `framelift serve` before it has said who it is, and after
// (docs/server.md, "The HTTP layer"). Every number is a bound on threads, memory or time that a
// hostile client could otherwise take from everyone else.
#include <chrono>
#include <cstddef>

namespace framelift::server {

struct HttpLimits {
  // Request threads. A request holds one only once its whole head has arrived (the gate waits
  // for it without a thread), and long responses (event streams, downloads) take at most half.
  int threads = 32;
  // A request head (request line and headers): its size, its number of lines, and how long it
  // may take to arrive from the connection's accept. Over any of them: 431 or 408, and closed.
  size_t max_head_bytes = 16 * 1024;
  int max_head_lines = 100;
  std::chrono::milliseconds head_deadline{10'000};
  // A body must arrive within body_grace plus its length at min_body_rate.
  std::chrono::milliseconds body_grace{10'000};
  size_t min_body_bytes_per_second = 64 * 1024;
  // One read or write of an accepted request that makes no progress for this long ends it.
  std::chrono::milliseconds idle_timeout{5'000};
  // Connections still sending their head, in all and from one address (loopback clients all
  // share 127.0.0.1 through `ssh -L`, so the per-address cap is for the HTTPS case).
  int max_pending = 512;
  int max_pending_per_address = 128;
  // Connections whose request is being answered from one non-loopback address.
  int max_active_per_address = 16;
  // Event streams and downloads at once, per user and in all (in all: at most threads / 2).
  int max_long_per_user = 4;
};

}  // namespace framelift::server
