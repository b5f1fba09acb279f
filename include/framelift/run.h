#pragma once
// Running a pipeline from a file to a file, as `framelift run` does: decode, the stages, encode,
// with audio, subtitles, chapters, metadata and HDR fields copied; by default as a resumable job
// of segments (a run stopped by a cancel, a signal or a crash resumes where it stopped when the
// same request runs again; docs/jobs.md).
//
// Usage:
//
//   framelift::RunRequest r;
//   r.input = "in.mkv";
//   r.output = "out.mkv";
//   r.pipeline = "upscale:model=realesr-animevideov3-x2";
//   r.codec = "libx265";
//   r.crf = 20;
//   framelift::RunResult res = framelift::run(r, [](const framelift::Progress& p) { show(p); });
//
// Errors: throws framelift::Error: Usage (bad request, an existing output without overwrite),
// Input, Output, Model, Resource, and Interrupted when `cancel` returned true (finished segments
// are kept). The output appears under its final name only when complete.
//
// Thread-safety: run() blocks the calling thread; it may be called from several threads for
// different outputs. A cancel (like SIGINT/SIGTERM) stops every run in the process: cancelling
// is process-wide in this version.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace framelift {

struct RunRequest {
  std::string input;                               // a file or URL FFmpeg opens
  std::string output;                              // the extension picks the container
  std::string pipeline;                            // "" passes the video through
  std::map<std::string, std::string> stage_defaults;  // {"device","cuda"}, {"precision","bf16"}, ...
  std::string codec;                               // "" : libx264 (or the container's default)
  std::optional<double> crf;
  std::string preset, pix_fmt;                     // "" : the encoder's preset, the input's format
  std::map<std::string, std::string> encoder_options;
  int64_t max_frames = 0;                          // 0: every frame
  bool overwrite = false;                          // replace an existing output
  bool as_job = true;                              // segments + journal, resumable; false: one pass
  int64_t segment_frames = 0;                      // 0: about 10 s per segment
  std::string job_dir;                             // "": OUTPUT.framelift-job, removed when done
};

struct Progress {
  int64_t frames_in = 0;    // input frames processed (a resumed job counts earlier runs' too)
  int64_t frames_total = 0; // input frames expected (0: unknown)
  int64_t frames_out = 0;   // frames encoded by this run
  double seconds = 0;       // since run() started
};

struct RunResult {
  int64_t frames_in = 0, frames_out = 0;  // this call's
  int64_t decode_errors = 0;               // corrupt frames or packets skipped
  double seconds = 0;
  std::string output;
};

// Calls `progress` about four times a second from a thread of its own (never concurrently with
// itself), and `cancel` as often; a true from `cancel` stops the run within a frame or a tile.
RunResult run(const RunRequest& request, const std::function<void(const Progress&)>& progress = {},
              const std::function<bool()>& cancel = {});

}  // namespace framelift
