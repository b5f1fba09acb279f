#pragma once
// What a pipeline asks of the whole process: libtorch's CPU threads, the CPU memory budget, a
// CUDA device's allocator cap. These are process-wide, so they are made once, by whoever runs the
// pipeline (the runner before a run's stages are built, the public framelift::Pipeline when it
// is made), and never by a stage's constructor: a stage built later would silently undo what an
// earlier one set (an interpolate after an upscale:threads=2 went back to every CPU).
//
// From the stages' options (threads=, max_memory=, device=), as validated against their schemas,
// with the command line's defaults: the most threads any CPU stage asks for (none: every usable
// CPU), the tightest memory budget per device.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pipeline/stage_spec.h"

namespace framelift::pipeline {

struct ProcessSettings {
  int cpu_threads = 0;            // 0: infer::usable_cpu_count()
  int64_t cpu_memory_budget = 0;  // bytes; 0: leave the budget as it is
  std::map<std::string, int64_t> device_memory_limits;  // "cuda:0" -> bytes
};

// Throws Error(Usage) as make_stages() would for a bad option (an unknown stage is left to it).
ProcessSettings process_settings(const std::string& pipeline_text, const std::map<std::string, std::string>& defaults);
// The same for parsed stages whose command-line defaults are set (StageOptions::set_defaults).
ProcessSettings process_settings(const std::vector<StageSpec>& specs);

// Makes them. Thread-safety: call before the run's threads start; libtorch's inter-op pool can
// be sized once per process only (infer/threads.h).
void apply(const ProcessSettings& settings);

}  // namespace framelift::pipeline
