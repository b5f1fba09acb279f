#pragma once
// Measuring a pipeline on a sample of a video, as `framelift profile` does: the real stages on
// a few stretches of consecutive frames spread over the clip, timed per stage and per section
// (decode, convert, inference, encode, the waits between threads), with memory peaks, written as
// the manifest `framelift plan --calibration` and framelift::plan_job read (docs/planner.md).
//
// Usage:
//
//   framelift::ProfileRequest q;
//   q.run.input = "clip.mkv";
//   q.run.pipeline = "upscale:model=realesr-animevideov3-x2";
//   q.manifest_file = "rtx4090.json";
//   framelift::ProfileResult r = framelift::profile(q);   // r.text: the table the CLI prints
//
// Errors: throws framelift::Error as run() does; Usage for frames or stretches below 1, Output
// for a manifest file that exists without overwrite.
// Thread-safety: blocks the calling thread; one profile at a time per process gives honest
// numbers (they share the CPU and the device).
#include <cstdint>
#include <string>

#include "framelift/run.h"

namespace framelift {

struct ProfileRequest {
  // input, pipeline, stage_defaults (device, precision, tile, batch, ...), encoder, colour
  // conversion: as the job will run. Its output and job fields are not used.
  RunRequest run;
  int64_t frames = 24;         // input frames to measure
  int stretches = 4;           // spread over the clip in this many runs of consecutive frames
  int64_t warmup_frames = 2;   // run first and not measured
  uint64_t seed = 0;           // 0: stretches evenly spread; else placed at random from this seed
  std::string manifest_file;   // "": not written; else the manifest, replaced atomically
  bool overwrite = false;      // replace an existing manifest_file
  std::string keep_output;     // "": the encoded sample is deleted; else kept here
};

struct ProfileResult {
  std::string manifest_json;   // the manifest (schema 1), indented
  std::string text;            // a readable table: sections, stages, GFLOP/s, memory
  double end_to_end_fps = 0;   // output frames per second, decode to encode
  double inference_fps = 0;    // output frames per second of the stages' networks alone
};

ProfileResult profile(const ProfileRequest& request);

}  // namespace framelift
