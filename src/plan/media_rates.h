#pragma once
// How fast frames are encoded and decoded: NVENC per engine, or software encoders per CPU thread,
// by codec and preset class. Indicative figures (docs/planner.md gives their sources); a profile
// manifest's measured encoder speed replaces them (calibration.h).
#include <string>

#include "plan/calibration.h"
#include "plan/gpu_catalog.h"

namespace framelift::plan {

struct EncodePlan {
  std::string codec;        // what actually runs (a software fallback for *_nvenc without NVENC)
  bool on_gpu = false;      // NVENC
  bool fell_back = false;   // asked for NVENC, got the CPU
  double mpx_per_s = 0;     // output megapixels per second
  double cpu_threads = 0;   // threads it occupies (0 on NVENC)
};

// `threads`: CPU threads available to the encoder (vCPUs of the offer).
EncodePlan encode_plan(const std::string& codec, const std::string& preset, const Device& device, double threads,
                       const Calibration& calibration);

// Software decoding of the input (framelift's default; --hwaccel cuda is faster), megapixels/s.
double decode_mpx_per_s(double threads);

}  // namespace framelift::plan
