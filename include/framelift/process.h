#pragma once
// What a program built on framelift sets up once, early in main(), to behave as the CLI does:
// signals that stop runs cleanly and FFmpeg's messages in framelift's log. Neither is done by
// the library on its own, as both change the whole process.
//
// Thread-safety: call them from main() before starting threads; both are idempotent.

namespace framelift {

// SIGINT and SIGTERM stop every run and job of the process at the next frame or tile, keeping
// finished segments (run() then throws Error(Interrupted)); a second signal exits at once with
// status 130. Without this the signals keep their default action (the process dies and a job
// resumes from its last finished segment).
void install_signal_handlers();

// FFmpeg's log lines go through framelift's log (stderr, one level filters both) instead of
// FFmpeg's own default output.
void route_ffmpeg_log();

}  // namespace framelift
