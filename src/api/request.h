#pragma once
// The public RunRequest (include/framelift/run.h) to the engine's options and back: the one
// place where the API's strings for choices (hwaccel, colour conversion, shards, preemption
// providers, prices) are parsed, so a bad one is the same Usage error from the CLI and from a
// library call.
#include "framelift/run.h"
#include "run/job_runner.h"

namespace framelift::api {

pipeline::RunOptions run_options_of(const RunRequest& request);
pipeline::JobOptions job_options_of(const RunRequest& request);
// A saved job's request (job.json), as Job::open gives it.
RunRequest request_of(const jobs::RunSpec& spec, int64_t segment_frames);

pipeline::ProgressMode progress_mode_of(ProgressDisplay display);
lifecycle::LifecycleOptions lifecycle_of(const MachineLifecycle& machine);

}  // namespace framelift::api
