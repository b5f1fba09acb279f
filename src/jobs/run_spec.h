#pragma once
// What a run makes, as opposed to how it is watched or where it runs: input, output, pipeline,
// the stages' defaults (the CLI's --device, --tile, ...), encoder, decoder, frame limit, colour
// conversion. One struct with one JSON form: pipeline::RunOptions is a RunSpec plus run-time
// plumbing, and a job's job.json (jobs/job_spec.h) is a RunSpec plus the job's own fields, so
// `framelift resume` gets back every option the job was started with. A field added here is
// saved, resumed and compared without another edit elsewhere (tests/jobs/run_spec_test.cpp
// changes each one and checks the round trip).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "media/color_conversion.h"
#include "media/decoder.h"
#include "media/encoder.h"

namespace framelift::jobs {

struct RunSpec {
  std::string input;                 // file or URL
  std::filesystem::path output;      // the final output file
  std::string container;             // force a container format ("" = from the extension)
  std::string pipeline;              // "resize:scale=2,..."; empty: pass-through
  // Options every stage reads unless its own text sets them: device, precision, threads, tile,
  // tile_overlap, tile_batch, batch, max_memory (the CLI's --device, --precision, ... flags).
  std::map<std::string, std::string> stage_defaults;
  media::EncoderSettings encoder;
  media::DecoderOptions decoder;
  int64_t max_frames = 0;            // stop after this many input frames (0: all)
  media::ColorConversion color_conversion = media::ColorConversion::Auto;
  int64_t queue_depth = 8;           // frames buffered between threads (memory, not the result)

  bool operator==(const RunSpec&) const = default;
};

// Adds the spec's fields to `j` (an object; other keys are kept).
void add_to_json(const RunSpec& spec, nlohmann::json& j);
// Reads the fields add_to_json wrote. Throws Error(Input) naming `file` and the key for a
// missing or mistyped one.
RunSpec run_spec_from_json(const nlohmann::json& j, const std::string& file);

}  // namespace framelift::jobs
