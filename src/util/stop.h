#pragma once
// A process-wide request to stop: set by SIGINT/SIGTERM or by a preemption notice, polled by the
// long loops (demux, frames, tiles, segments). Stopping is cooperative so that whatever is
// finished (a segment, the journal) stays consistent: the current unit of work is abandoned, its
// partial file removed, and the error unwinds as ErrorKind::Interrupted.
#include <string>

namespace framelift {

// SIGINT and SIGTERM request a stop; a second signal exits at once (status 130). Idempotent.
void install_stop_signals();

// From any thread (a watcher) or a signal handler. `reason` is kept for the message (first wins).
void request_stop(const char* reason = "stop requested");
bool stop_requested() noexcept;
std::string stop_reason();

// Throws Error(Interrupted) naming the reason when a stop was requested.
void throw_if_stop_requested();

// For tests and for library users who run several jobs in one process.
void clear_stop_request();

}  // namespace framelift
