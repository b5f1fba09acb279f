#pragma once
// What a job is: everything that decides its output. Saved as job.json in the job folder, so that
// `framelift resume --job-dir D` (a Slurm array task, a Kubernetes pod, a rerun after a crash)
// needs nothing else, and compared on every run so that finished segments are never mixed with
// segments of a different input or pipeline.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "jobs/run_spec.h"

namespace framelift::jobs {

// The run the job makes (jobs/run_spec.h: its one JSON form) plus what only a job has.
struct JobSpec : RunSpec {
  std::string framelift_version;
  std::string input_fingerprint;
  int64_t segment_frames = 0;
};

nlohmann::json to_json(const JobSpec& spec);
// Throws Error(Input) naming `file` and the key for a missing or mistyped field.
JobSpec spec_from_json(const nlohmann::json& j, const std::string& file = "job.json");

// "" when `saved` segments may be used for `wanted`; otherwise what changed, for the message
// ("the input changed", "the pipeline changed", ...). The output path, the device, the thread
// count, the decoder and the colour conversion may change: moving a stopped job to another
// machine or GPU is the point of resuming (a CPU and a GPU segment, or a swscale and a tensor-op
// conversion, differ by rounding only, well below the encoder's own error).
std::string spec_difference(const JobSpec& saved, const JobSpec& wanted);

}  // namespace framelift::jobs
