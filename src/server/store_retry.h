#pragma once
// Writes to the server's database that must not fail for a moment's contention: another
// connection holding a write lock past the busy timeout (a `serve token` command, a backup, an
// admin's sqlite3 shell) makes SQLite answer "database is locked", which is worth a few tries
// before the worker gives up on a job's write.
#include <atomic>
#include <chrono>
#include <functional>
#include <string>

namespace framelift::server {

struct RetryPolicy {
  int attempts = 3;                                   // in all, the first included
  std::chrono::milliseconds first_wait{100};          // before the second; doubling after it
  std::chrono::milliseconds max_wait{5000};           // no wait longer than this
};

// Runs `write` until it returns, at most policy.attempts times, waiting between tries (not after
// the last, nor once `give_up` is set). Returns "" when a try succeeded, else the last failure's
// one line. Never throws: every exception of `write` counts as a failed try.
std::string write_with_retry(const std::function<void()>& write, const RetryPolicy& policy = {},
                             const std::atomic<bool>* give_up = nullptr);

}  // namespace framelift::server
