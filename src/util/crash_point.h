#pragma once
// Fault injection for the crash-safety tests, in the manner of DuckDB's: every step that makes
// work durable (writing a temporary file, syncing it, renaming it into place, syncing its folder)
// and every early step of a job passes a named point where a test can kill the process, stop it
// as a signal would, or make that one step fail.
//
// FRAMELIFT_CRASH_AT=NAME:N: the N-th time the process passes crash_point("NAME") it kills itself
// with SIGKILL (no cleanup, no destructors: what a power cut or a reclaimed spot instance does).
// FRAMELIFT_STOP_AT=NAME:N: the N-th time, it raises SIGTERM on the thread passing the point
// (what Slurm, Kubernetes or a spot notice send, at an instant a test can name instead of a
// timing it hopes for): the handler framelift installs requests the stop, and the run goes on to
// its next stop check as it would after a real signal.
// Points:
//   "plan"          a job's plan is about to be made and written (job.json is in place)
//   "planned"       plan.json is in place; no segment has started
//   "encoder-open"  a video encoder (a segment's, or a plain run's) is about to open
//   "packet"        each encoded video packet, just after it was written to its file
//   "decode"        each decoded frame
//   "encode"        each encoded frame
//   "journal"       twice per finished segment: before its file is renamed into segments/, then
//                   with the file in place and its journal record not yet written
//   "commit"        before each rename into place (job.json, plan.json, part files, segments,
//                   records, the output)
//   "committed"     after it, before the folder is synced
//   "assemble"      each video packet written by assemble
//   "assembled"     the output is in place (assembled.json names it); its frames are not counted
//                   yet, the job folder is still there
//
// FRAMELIFT_FAIL_AT=NAME:N[:ERRNO]: the N-th time the process passes failure_point("NAME") it
// returns ERRNO (a number, default EIO), which the caller treats as that step's own failure.
// Points: "write" (each write of a file committed through util/fs.h), "fsync" (each sync of a file
// or folder), "rename" (each rename into place), "lose-stream" (each other stream assembly is
// about to add to the output: when it fails, the stream is left out, a lost stream that only the
// read-back of the written output, jobs/output_check.h, may catch).
//
// Without the variables each point costs one load and a test of two pointers. Thread-safe.
#include <string_view>

namespace framelift {

void crash_point(std::string_view name);
// 0, or the errno the test asked this step to fail with.
int failure_point(std::string_view name);

}  // namespace framelift
