#pragma once
// The job options shared by `run`, `upscale`, `interpolate` and `resume` (segments, resume,
// shards, workers), and running a pipeline as a job from them.
#include <CLI/CLI.hpp>
#include <string>

#include "framelift/run.h"

namespace framelift::cli {

struct JobArgs {
  std::string job_dir;
  int64_t segment_frames = 0;
  bool restart = false, prepare = false, no_assemble = false, keep_job = false, no_job = false, cold_segments = false;
  std::string shard, segments, devices;
  int claim_timeout_s = 120;
  std::string hourly_price, watch_preemption = "off", on_complete, on_fail, shutdown_command;
  bool shutdown_when_done = false;
};

// `resume` has no -i/-o: with_run_flags false leaves out the flags that only make sense when the
// job is first described (--restart, --prepare, --no-job, --segment-frames).
void add_job_options(CLI::App* cmd, JobArgs& args, bool with_run_flags = true);

// The job flags into a request (shards, workers, hooks, prices: parsed by the API, which refuses
// bad ones with the same messages for every caller).
void apply_job_args(const JobArgs& args, RunRequest& request);

// --progress auto|bar|json|none. Throws Error(Usage).
ProgressDisplay parse_progress_display(const std::string& text);

// Runs the request through the public API (framelift::run, or framelift::run_batch for a folder
// or list input), logs its summary; returns the exit code.
int run_request(const RunRequest& request);

}  // namespace framelift::cli
