#pragma once
// The page's before/after preview: one frame of the input at a time, through the job's pipeline,
// as a PNG whose left half is the input resized with bicubic to the output's size and whose right
// half is the pipeline's output. Built on the public API only (Source, Pipeline, Sink).
#include <filesystem>
#include <string>

namespace framelift::server {

struct PreviewRequest {
  std::string input;     // a resolved file
  std::string pipeline;
  double time_s = 0;     // the frame at or after this time
};

// Writes the PNG to `png` (replacing it). Throws framelift::Error like the stages do (Usage for
// a bad pipeline, Input for the file, Model for weights).
void render_preview(const PreviewRequest& request, const std::filesystem::path& png);

}  // namespace framelift::server
