#pragma once
// A process-wide request to stop: set by SIGINT/SIGTERM or by a preemption notice, polled by the
// long loops (demux, frames, tiles, segments). Stopping is cooperative so that whatever is
// finished (a segment, the journal) stays consistent: the current unit of work is abandoned, its
// partial file removed, and the error unwinds as ErrorKind::Interrupted.
#include <atomic>
#include <string>

namespace framelift {

// A stop for one run rather than the process: what a library caller's cancel sets. The threads
// working for that run see it through a CancelScope; stop_requested() there reports it too.
class CancelFlag {
 public:
  void cancel(const char* reason = "cancelled");  // any thread; the first reason wins
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_acquire); }
  const char* reason() const;

 private:
  std::atomic<bool> cancelled_{false};
  std::atomic<const char*> reason_{nullptr};
};

// While alive, stop_requested() on this thread also reports `flag` (nullptr: only the process's
// stop). A run's threads open one with the flag of the thread that started them
// (current_cancel_flag()), so a cancel reaches every loop of that run and no other run.
class CancelScope {
 public:
  explicit CancelScope(const CancelFlag* flag);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const CancelFlag* previous_;
};
const CancelFlag* current_cancel_flag() noexcept;

// SIGINT and SIGTERM request a stop; a second signal exits at once (status 130). Idempotent.
void install_stop_signals();

// From any thread (a watcher) or a signal handler. `reason` is kept for the message (first wins).
void request_stop(const char* reason = "stop requested");
// The process's stop, or this thread's run's cancel (CancelScope).
bool stop_requested() noexcept;
std::string stop_reason();

// Throws Error(Interrupted) naming the reason when a stop was requested.
void throw_if_stop_requested();

// For tests and for library users who run several jobs in one process.
void clear_stop_request();

}  // namespace framelift
