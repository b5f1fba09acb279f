#pragma once
// Runs a whole job, a job's segment or a profile sample: a FrameReader (demux + decode of the
// run's InputWindow), the StageChain on a process thread, a FrameWriter (encode + mux), joined by
// bounded queues, so that decoding, inference and encoding overlap and memory stays flat. The
// three kinds of run differ only in their InputWindow (input_window.h).
//
// Guarantees: every decoded frame reaches the stages in order with its own timestamp (variable
// frame rate is kept); audio, subtitle, attachment and data streams are copied bit-exact with
// chapters, metadata and color/HDR/rotation side data; the output appears under its final name
// only when it is complete; the input is never written.
#include <cstdint>
#include <filesystem>
#include <array>
#include <map>
#include <vector>
#include <optional>
#include <string>

#include "jobs/run_spec.h"
#include "jobs/segment_plan.h"
#include "media/decoder.h"
#include "media/encoder.h"
#include "run/input_window.h"
#include "run/progress.h"

namespace framelift {
class Profiler;
}

namespace framelift::pipeline {

class WarmStages;

// One segment of a job (see jobs/segment_plan.h): the run decodes from a keyframe before it,
// feeds the stages the segment plus the context they ask for (Stage::context_frames), keeps the
// output frames whose time falls in the segment, and writes the video stream only.
struct SegmentWindow {
  const jobs::SegmentPlan* plan = nullptr;
  int index = 0;
  bool seek = true;           // false: decode from the start (for inputs whose seeks land late)
  bool global_header = true;  // as the final container wants (segments are copied into it)
};

// One stretch of a sample run (RunOptions::sample), as input timestamps: decoding starts at the
// keyframe `seek`, the frames from `from` to `to` (inclusive) go to the stages.
using SampleStretch = Stretch;

using media::ColorConversion;
using media::parse_color_conversion;

// What the run makes (jobs::RunSpec: input, output, pipeline, stage defaults, encoder, decoder,
// frame limit, colour conversion; one JSON form, saved in a job's job.json) plus what part of the
// input this run is for and how it reports.
struct RunOptions : jobs::RunSpec {
  bool overwrite = false;            // -y
  ProgressMode progress = ProgressMode::Auto;
  std::optional<SegmentWindow> window;
  // A sample (`framelift profile`): these stretches, in order, joined as if they were one video
  // (each one's timestamps follow the previous one's last frame). Video only, like a segment.
  std::vector<SampleStretch> sample;
  // The largest frame any stage may make, in pixels (a caller's PipelinePolicy); checked as the
  // stages are configured, before a frame is decoded. 0: any.
  int64_t max_frame_pixels = 0;
};

// What a run's caller lends it for the run: none of it owned by the run, each must outlive the
// call; all optional. Values (RunOptions) and the run-time objects they are watched and served
// through stay apart, so that RunOptions can be copied, saved and compared.
struct RunContext {
  // The run adds to these (a job's overall progress) and shows no progress itself.
  ProgressCounters* shared_progress = nullptr;
  // Every thread of the run charges its time to sections of it (util/profiler.h): "decode",
  // "convert", "N:stage", "N:inference", "encode", and the waits on the queues.
  Profiler* profiler = nullptr;
  // The stages come from here (built on first use, reset and reused after): a job worker's
  // segments share one chain.
  WarmStages* warm_stages = nullptr;
};

struct RunReport {
  // A segment's video packets' timestamps as the encoder made them, in encoder_time_base: the
  // segment file's container rounds them (Matroska: to the millisecond) and drops decode
  // timestamps, and assembling must give the final muxer exactly what one uninterrupted run would.
  AVRational encoder_time_base{1, 1};
  std::vector<std::array<int64_t, 3>> packet_times;  // {pts, dts, duration} per packet, in order
  int64_t frames_in = 0;
  int64_t frames_out = 0;
  int64_t decode_errors = 0;
  double seconds = 0;
  std::filesystem::path output;
  std::string summary() const;
};

// Throws framelift::Error with a one-line message naming the file and the problem.
RunReport run_pipeline(const RunOptions& options, const RunContext& context = {});

// The checks run_pipeline makes before reading anything: an output is given, is not the input,
// does not exist unless overwrite, and its folder exists. Throws Error(Usage or Output).
void check_output_path(const RunOptions& options);

}  // namespace framelift::pipeline
