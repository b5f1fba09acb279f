#pragma once
// The inference and encoder flags that `run`, `upscale`, `interpolate` and `profile` share: the
// same words must mean the same thing in the command that measures and the one that does the job.
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "framelift/run.h"

namespace framelift::cli {

struct InferenceArgs {
  std::string device = "auto", precision, max_memory, color_conversion = "auto";
  int threads = 0, tile = 0, tile_overlap = -1, batch = 1, tile_batch = 1;
};

struct EncoderArgs {
  double crf = -1;
  std::vector<std::string> options;  // -e KEY=VALUE
};

// --device, --precision, --threads, --tile, --tile-overlap, --tile-batch, --batch, --max-memory,
// --color-conversion (parsed by the API, src/api/request.cpp).
void add_inference_options(CLI::App* cmd, InferenceArgs& a);
// The defaults every stage reads (RunRequest::stage_defaults). Throws Error(Usage).
std::map<std::string, std::string> stage_defaults(const InferenceArgs& a);

// --crf and -e on top of -c/--preset/--pix-fmt, which the caller binds to its RunRequest itself.
void add_encoder_options(CLI::App* cmd, EncoderArgs& a);
// Applies --crf and -e to the request. Throws Error(Usage) for a malformed -e.
void apply_encoder_options(const EncoderArgs& a, RunRequest& request);

}  // namespace framelift::cli
