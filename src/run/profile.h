#pragma once
// `framelift profile`: runs the real pipeline on a sample of the input (a few stretches of
// consecutive frames spread over the clip, joined into one run) and measures where the time and
// the memory go: per stage, per section (decode, convert, upload, inference, download, encode,
// and the waits between threads), after a warm-up run of the same pipeline.
//
// The manifest written from this (cli/profile_command.cpp, docs/planner.md) is what the planner
// calibrates itself with.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "jobs/segment_plan.h"
#include "run/runner.h"
#include "util/profiler.h"

namespace framelift::pipeline {

struct ProfileOptions {
  RunOptions run;          // input, pipeline, encoder, stage defaults; output: where the sample goes
  int64_t frames = 24;     // input frames to measure
  int stretches = 4;       // spread over the clip in this many runs of consecutive frames
  int64_t warmup_frames = 2;
  uint64_t seed = 0;       // 0: stretches evenly spread; otherwise placed at random from this seed
};

struct StageProfile {
  int index = 0;           // 1-based, as in the pipeline text
  std::string name;        // upscale, interpolate, ...
  double own_s = 0;        // the stage's code outside the sections below
  double upload_s = 0, inference_s = 0, download_s = 0;
  int64_t inference_calls = 0;
  double inference_pixels = 0;       // input pixels through the network, tiles' context included
  double largest_call_pixels = 0;    // of the largest call (the peak memory is that call's)
  int64_t peak_activation_bytes = 0; // the highest rise of device memory during one network call
  // One call's time, robust to a noisy machine: the median over calls of seconds per input pixel,
  // times the mean input pixels of a call (calls differ in size at the frame's edges).
  double call_s = 0;
  double total_s() const { return own_s + upload_s + inference_s + download_s; }
};

struct ProfileResult {
  std::vector<SampleStretch> sample;
  int64_t frames_in = 0, frames_out = 0, frames_decoded = 0;
  double wall_s = 0;                  // the measured run, model loading included
  double warmup_s = 0;
  std::map<std::string, SectionStats> sections;
  std::vector<StageProfile> stages;
  int64_t peak_device_bytes = 0;      // tensors on the device, whole measured run
  int64_t peak_host_bytes = 0;        // resident set high-water mark of the process
  std::string device;                 // "cpu fp32", "cuda:0 fp16 (NVIDIA ...)"
  int threads = 0;                    // CPU threads of the inference
  double seconds(const std::string& section) const;
};

// Picks the sample: `stretches` runs of consecutive frames totalling `frames`, spread over the
// plan's frames, each decoded from the keyframe at or before its first frame.
std::vector<SampleStretch> choose_sample(const jobs::SegmentPlan& plan, int64_t frames, int stretches, uint64_t seed);

// Throws framelift::Error like run_pipeline.
ProfileResult profile_pipeline(const ProfileOptions& options);

}  // namespace framelift::pipeline
