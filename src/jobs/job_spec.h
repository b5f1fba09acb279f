#pragma once
// What a job is: everything that decides its output. Saved as job.json in the job folder, so that
// `framelift resume --job-dir D` (a Slurm array task, a Kubernetes pod, a rerun after a crash)
// needs nothing else, and compared on every run so that finished segments are never mixed with
// segments of a different input or pipeline.
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "media/decoder.h"
#include "media/encoder.h"

namespace framelift::jobs {

struct JobSpec {
  std::string framelift_version;
  std::string input;
  std::string input_fingerprint;
  std::string output;
  std::string container;  // forced container format; "" from the output's extension
  std::string pipeline;
  std::map<std::string, std::string> stage_defaults;
  media::EncoderSettings encoder;
  media::DecoderOptions decoder;
  int64_t segment_frames = 0;
  int64_t max_frames = 0;
};

nlohmann::json to_json(const JobSpec& spec);
JobSpec spec_from_json(const nlohmann::json& j);

// "" when `saved` segments may be used for `wanted`; otherwise what changed, for the message
// ("the input changed", "the pipeline changed", ...). The output path, the device and the thread
// count may change: moving a stopped job to another machine or GPU is the point of resuming (a
// CPU and a GPU segment differ by rounding only, well below the encoder's own error).
std::string spec_difference(const JobSpec& saved, const JobSpec& wanted);

}  // namespace framelift::jobs
