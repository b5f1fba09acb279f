#pragma once
// The page's before/after preview: one frame of the input at a time, through the job's pipeline,
// as a PNG whose left half is the input resized with bicubic to the output's size and whose right
// half is the pipeline's output. Built on the public API only (Source, Pipeline, Sink).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <framelift/policy.h>

namespace framelift::server {

struct PreviewRequest {
  std::string input;     // a resolved file
  std::string pipeline;
  double time_s = 0;     // the frame at or after this time
  // The largest frame any stage may make, in pixels (0: no limit). Checked stage by stage when
  // the chain is configured, before a frame is decoded, so that resize:w=16384:h=16384 is a
  // one-line refusal and not 3.2 GB of memory per frame.
  int64_t max_pixels = 0;
  // What the pipeline may do (framelift/policy.h), held to before any stage is built; nullopt:
  // anything.
  std::optional<PipelinePolicy> policy;
};

// Writes the PNG to `png` (replacing it). Throws framelift::Error like the stages do (Usage for
// a bad pipeline or a frame over max_pixels, Input for the file, Model for weights).
void render_preview(const PreviewRequest& request, const std::filesystem::path& png);

}  // namespace framelift::server
