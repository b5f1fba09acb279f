#pragma once
// Fault injection for the crash-safety tests, in the manner of DuckDB's: every step that makes
// work durable (writing a temporary file, syncing it, renaming it into place, syncing its folder)
// passes a named point where a test can kill the process or make that one step fail.
//
// FRAMELIFT_CRASH_AT=NAME:N: the N-th time the process passes crash_point("NAME") it kills itself
// with SIGKILL (no cleanup, no destructors: what a power cut or a reclaimed spot instance does).
// Points: "decode" (each decoded frame), "encode" (each encoded frame), "commit" (before each
// rename into place), "committed" (after it, before the folder is synced), "assemble" (each
// packet written by assemble).
//
// FRAMELIFT_FAIL_AT=NAME:N[:ERRNO]: the N-th time the process passes failure_point("NAME") it
// returns ERRNO (a number, default EIO), which the caller treats as that step's own failure.
// Points: "write" (each write of a file committed through util/fs.h), "fsync" (each sync of a file
// or folder), "rename" (each rename into place).
//
// Without the variables each point is one relaxed load. Thread-safe.
#include <string_view>

namespace framelift {

void crash_point(std::string_view name);
// 0, or the errno the test asked this step to fail with.
int failure_point(std::string_view name);

}  // namespace framelift
