#pragma once
// A job's output size per frame before any segment is written, for the free-space check a job
// makes before it starts (pipeline::DiskForecast, docs/jobs.md "Disk space"): the planner's
// bits-per-pixel table for the request's encoder and crf, at the output size the pipeline makes
// (read by the planner's parser, as `framelift plan` reads it).
#include "framelift/run.h"
#include "run/disk_check.h"

namespace framelift::api {

// No forecast (zeros) when the input cannot be probed or the pipeline not read: the run reports
// those itself, and the job's check then waits for its first segment's real size.
pipeline::DiskForecast disk_forecast(const RunRequest& request);

}  // namespace framelift::api
