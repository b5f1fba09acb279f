#pragma once
// What a pipeline written by someone the caller does not trust may do (the public form and its
// documentation: include/framelift/policy.h). Walks the parsed stages and, for each option the
// text sets, acts on the role its stage's schema declares (option_schema.h): filter graphs go
// through media/filter_policy.h, files and model files must lie inside the allowed folders once
// every symlink and `..` is resolved, devices must be listed, sizes stay under their bounds.
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "pipeline/stage_spec.h"

namespace framelift::pipeline {

struct Policy {
  std::set<std::string> filters;                // libavfilter filters a graph may use
  std::vector<std::filesystem::path> file_roots;  // folders file and model paths must lie in
  std::vector<std::string> devices;             // device= values the text may set; empty: none
  int max_frame_size = 0;                       // FrameSize options (resize w/h); 0: the schema's
  int max_tile = 0;                             // Tile options; 0: the schema's
  int max_batch = 0;                            // Batch options (batch, tile_batch); 0: the schema's
};

// Throws Error(Usage) with one line naming the stage, the option and why, for the first thing in
// `stages` the policy refuses. Unknown stages and options are left to the schema (make_stage).
void check_policy(const std::vector<StageSpec>& stages, const Policy& policy);

// Throws Error(Usage) "stage NAME makes WxH frames; the limit here is N pixels a frame" when a
// configured stage's frames are over `max_pixels` (0: no limit). Scale factors and filter graphs'
// expressions are only known once the input is, so this is checked as the stages are configured.
void check_frame_pixels(const std::string& stage, int width, int height, int64_t max_pixels);

}  // namespace framelift::pipeline
