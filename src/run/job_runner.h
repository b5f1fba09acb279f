#pragma once
// Runs a pipeline as a job (see docs/jobs.md): the output is made of segments that are processed
// independently, journaled as they finish, and assembled at the end. A run that stops for any
// reason (a signal, a preemption notice, SIGKILL, a power cut) loses at most the segments in
// flight; running the same command again resumes. Several workers (threads on several GPUs,
// processes on several machines sharing the folder, Slurm array tasks) split the segments.
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "jobs/shard.h"
#include "lifecycle/lifecycle_options.h"
#include "run/disk_check.h"
#include "run/runner.h"

namespace framelift::pipeline {

struct JobOptions {
  RunOptions run;                     // input, output, pipeline, encoder: what the job makes
  std::filesystem::path job_dir;      // "": "<output>.framelift-job" next to the output
  int64_t segment_frames = 0;         // 0: about 10 s of video per segment
  bool restart = false;               // start over when the folder holds a different job
  bool prepare_only = false;          // write the job and its plan, process nothing
  bool assemble = true;               // assemble once every segment is done
  bool keep_job_dir = false;          // keep the folder after assembling (kept anyway with --job-dir)
  jobs::SegmentSelection selection;   // which segments this process takes
  std::vector<std::string> devices;   // one worker per device; empty: one worker (stage defaults)
  std::chrono::seconds claim_stale_after{120};  // a claim without heartbeat this long is taken over
  std::string framelift_version;
  // Preemption watcher, hooks, shutdown, hourly price (see docs/lifecycle.md).
  lifecycle::LifecycleOptions lifecycle;
  // Called on the job's overall progress; the default reporter prints a bar or JSON lines.
  ProgressMode progress = ProgressMode::Auto;
  // Each worker builds its stage chain once and reuses it for every segment it takes (weights,
  // memory probe, CUDA graphs once). false: a fresh chain per segment, the reference path the
  // tests and bench/segments.sh compare with.
  bool warm_segments = true;
  // What the output will take on disk before a segment measures it (the API forecasts it from the
  // encoder), asked once the job is open: the free space is checked against it before the first
  // segment (a warning) and a disk-full error says how much more is needed. Empty: no forecast,
  // only the finished segments' sizes.
  std::function<DiskForecast()> disk_forecast;
  // When set, the job counts its progress here (a library caller watching it) instead of in
  // counters of its own. Not owned; must outlive the call.
  ProgressCounters* counters = nullptr;
};

struct JobReport {
  std::filesystem::path job_dir;
  int segments = 0;
  int done_before = 0;   // finished by earlier runs (or other workers) when this one started
  int done_now = 0;      // finished by this run
  int remaining = 0;     // not finished when this run ended (other shards)
  int64_t frames_in = 0, frames_out = 0;  // this run's
  int64_t decode_errors = 0;              // corrupt frames or packets skipped, this run
  double seconds = 0;
  bool assembled = false;
  std::string summary() const;
};

// Creates the job (or resumes it when the folder holds the same job) and processes the selected
// segments, then runs the hooks: --on-complete after success, --on-fail after a failure or a
// stop, the shutdown command only after the output was assembled and its frames counted.
// Throws Error: Usage when the folder holds another job (unless restart), Interrupted when
// stopped by a signal or a preemption notice (finished segments kept), and whatever a segment's
// run throws.
JobReport run_job(const JobOptions& options);

// The RunOptions of the job saved in `job_dir` (for `framelift resume`). Throws Error(Usage)
// when the folder holds no job.
RunOptions load_job_run_options(const std::filesystem::path& job_dir, int64_t* segment_frames);

// How far the job in `job_dir` is: its output, the plan's segments and the finished ones (by
// the journal's records; their files are checked when a worker resumes). Throws Error(Usage)
// when the folder holds no job.
struct JobState {
  std::filesystem::path output;
  int segments = 0, finished = 0;
};
JobState job_state(const std::filesystem::path& job_dir);

// Assembles a job whose segments are all finished; with wait > 0, first waits up to that long
// for other workers to finish them. Returns the output path.
std::filesystem::path assemble_job(const std::filesystem::path& job_dir, bool overwrite, std::chrono::seconds wait);

}  // namespace framelift::pipeline
