#pragma once
// Runs a whole job: demux + decode, the stage chain, encode + mux, on three threads joined by
// bounded queues, so that decoding, inference and encoding overlap and memory stays flat.
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

#include "jobs/segment_plan.h"
#include "media/decoder.h"
#include "media/encoder.h"
#include "pipeline/progress.h"

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
struct SampleStretch {
  int64_t seek = 0, from = 0, to = 0;
};

// Where YUV<->RGB happens. Auto: with tensor ops on the device of the stage at that end of the
// chain when it is a GPU (infer/yuv_tensor.h; only the 8- or 10-bit planes cross the bus), else
// with swscale. Tensor: the tensor ops wherever the stage is, the CPU included (how that path is
// tested without a GPU). Swscale: never the tensor ops. Formats the tensor ops do not take
// (RGB, alpha, YCgCo...) always go through swscale.
enum class ColorConversion { Auto, Swscale, Tensor };
// "auto", "swscale", "tensor"; throws Error(Usage) naming --color-conversion otherwise.
ColorConversion parse_color_conversion(const std::string& text);

struct RunOptions {
  std::string input;                 // file or URL
  std::filesystem::path output;
  bool overwrite = false;            // -y
  std::string pipeline;              // "resize:scale=2,..."; empty: pass-through
  media::EncoderSettings encoder;
  media::DecoderOptions decoder;
  ProgressMode progress = ProgressMode::Auto;
  size_t queue_depth = 8;            // frames buffered between threads
  std::string container;             // force a container format ("" = from the extension)
  int64_t max_frames = 0;            // stop after this many input frames (0: all); for samples
  // Options every stage reads unless its own text sets them: device, precision, threads, tile,
  // tile_overlap, batch, max_memory (the CLI's --device, --precision, ... flags).
  std::map<std::string, std::string> stage_defaults;
  std::optional<SegmentWindow> window;
  // A sample (`framelift profile`): these stretches, in order, joined as if they were one video
  // (each one's timestamps follow the previous one's last frame). Video only, like a segment.
  std::vector<SampleStretch> sample;
  // When set, the run adds to these (a job's overall progress) and shows no progress itself.
  ProgressCounters* shared_progress = nullptr;
  // When set, every thread of the run charges its time to sections of it (util/profiler.h):
  // "decode", "convert", "N:stage", "N:inference", "encode", and the waits on the queues.
  Profiler* profiler = nullptr;
  ColorConversion color_conversion = ColorConversion::Auto;
  // When set, the stages come from here (built on first use, reset and reused after): a job
  // worker's segments share one chain. Not owned; must outlive the call.
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
RunReport run_pipeline(const RunOptions& options);

// The checks run_pipeline makes before reading anything: an output is given, is not the input,
// does not exist unless overwrite, and its folder exists. Throws Error(Usage or Output).
void check_output_path(const RunOptions& options);

}  // namespace framelift::pipeline
