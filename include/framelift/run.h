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
// Input, Output, Model, Resource, and Interrupted when `cancel` returned true or a callback threw
// (finished segments are kept; see run() below). The output appears under its final name only when complete.
//
// Thread-safety: run() blocks the calling thread; it may be called from several threads for
// different outputs. A true from one call's `cancel` stops that call only; SIGINT/SIGTERM (when
// the program installed framelift's handlers, as the CLI does) stop every run in the process.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framelift/choices.h"
#include "framelift/policy.h"

namespace framelift {

// How a run shows its progress itself (besides the callback): what the CLI's --progress picks.
enum class ProgressDisplay {
  None,       // nothing (the default for library calls)
  Auto,       // a bar on stderr when it is a terminal, else nothing
  Bar,        // a bar on stderr
  JsonLines,  // one JSON object per line on stdout (docs/jobs.md)
};

// Life on a rented machine (docs/lifecycle.md); only for runs as jobs.
struct MachineLifecycle {
  PreemptionWatch watch_preemption = PreemptionWatch::Off;  // stop cleanly on a notice
  std::string on_complete, on_fail;      // shell commands run at the end (FRAMELIFT_OUTPUT, ...)
  bool shutdown_when_done = false;       // after the output was assembled and its frames counted
  std::string shutdown_command;          // "": $FRAMELIFT_SHUTDOWN_COMMAND, else `shutdown -h now`
  std::optional<double> hourly_price;    // USD per hour, >= 0: progress shows money; nullopt: none
};

struct RunRequest {
  std::string input;                               // a file or URL FFmpeg opens
  std::string output;                              // the extension picks the container
  std::string pipeline;                            // "" passes the video through
  std::map<std::string, std::string> stage_defaults;  // {"device","cuda"}, {"precision","bf16"}, ...
  // For a pipeline the caller did not write: checked before anything runs (framelift/policy.h);
  // nullopt: the text may do whatever the process may, as the CLI's own user may.
  std::optional<PipelinePolicy> policy;
  std::string codec;                               // "" : libx264 (or the container's default)
  std::optional<double> crf;
  std::string preset, pix_fmt;                     // "" : the encoder's preset, the input's format
  std::map<std::string, std::string> encoder_options;
  int64_t max_frames = 0;                          // 0: every frame
  bool overwrite = false;                          // replace an existing output
  std::string container;                           // "": from the output's extension ("matroska", "mp4")
  HwAccel hwaccel = HwAccel::None;                 // hardware decoding
  bool fail_on_corrupt_frames = false;             // false: skip and count them (RunResult::decode_errors)
  ColorConversion color_conversion = ColorConversion::Auto;
  int queue_depth = 8;                             // frames buffered between decode, stages, encode
  ProgressDisplay display = ProgressDisplay::None;

  // Jobs (docs/jobs.md); ignored when as_job is false.
  bool as_job = true;                              // segments + journal, resumable; false: one pass
  int64_t segment_frames = 0;                      // 0: about 10 s per segment
  std::string job_dir;                             // "": OUTPUT.framelift-job, removed when done
  bool restart = false;                            // discard a job folder that holds another job
  bool prepare_only = false;                       // write the job folder and stop (see Job::create)
  bool assemble = true;                            // assemble when every segment is done
  bool keep_job_dir = false;                       // keep the folder after assembling
  bool warm_segments = true;                       // false: a fresh pipeline per segment (reference path)
  std::optional<Shard> shard;                      // this process's share; nullopt: all
  std::optional<SegmentRange> segments;            // only these; nullopt: all (not with shard)
  std::vector<std::string> devices;                // one worker per device ("cuda:0", ...); empty: one
  int claim_timeout_s = 120;                       // a worker silent this long loses its segment
  MachineLifecycle lifecycle;
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
  // As a job: the folder, its segments, how many this call finished and how many are left for
  // other workers (shards); assembled is false when segments remain or assemble was off.
  std::string job_dir;
  int segments = 0, segments_done_before = 0, segments_done_now = 0, segments_remaining = 0;
  bool assembled = false;
  std::string summary;  // one line for a log: frames, speed, segments
};

// Calls `progress` about four times a second and `cancel` as often, both from a thread of the
// run's own (never concurrently with each other or themselves), and `progress` once more with the
// final figures on the calling thread before run() returns; a true from `cancel` stops the run
// within a frame or a tile.
//
// Callbacks that throw: an exception from `progress` or `cancel` never leaves the run's thread
// (no std::terminate). It is caught where the callback was called, the run is cancelled as by a
// true from `cancel` (finished segments kept), neither callback is called again, and run() throws
// Error(Interrupted) on the calling thread: "the progress callback threw: WHAT; ..." with the
// exception's what(). An error the run met by itself before that (Input, Output, ...) is thrown
// instead. A throw from the final call, after the work finished, is reported the same way (the
// output is then complete). run_batch() and Job::work() treat `cancel` and `progress` alike.
RunResult run(const RunRequest& request, const std::function<void(const Progress&)>& progress = {},
              const std::function<bool()>& cancel = {});

// Whether `input` names a batch: a folder of videos or a .txt list of them, one a line.
bool is_batch_input(const std::string& input);

struct BatchResult {
  int done = 0, failed = 0, remaining = 0;
  std::string summary_file;  // batch-summary.json in the output folder: every input's outcome
};

// Runs `request` over every input of a batch (request.input) into the folder request.output,
// one job per input (each resumable; finished ones are skipped on a rerun). An input that fails
// is recorded and the batch goes on. Throws Error(Usage) for job_dir, shard, segments or
// prepare_only, which name one job.
BatchResult run_batch(const RunRequest& request, const std::function<bool()>& cancel = {});

}  // namespace framelift
