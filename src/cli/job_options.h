#pragma once
// The job options shared by `run`, `upscale`, `interpolate` and `resume` (segments, resume,
// shards, workers), and running a pipeline as a job from them.
#include <CLI/CLI.hpp>
#include <string>

#include "pipeline/runner.h"

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

// Runs `run` as a job with `args` (see pipeline/job_runner.h); returns the exit code.
int run_as_job(const pipeline::RunOptions& run, const JobArgs& args);

}  // namespace framelift::cli
