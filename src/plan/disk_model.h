#pragma once
// The disk a job holds at its peak (docs/planner.md, "Disk"). A job writes every segment into its
// folder, keeps them until the output is assembled, and assembly copies their packets into the
// output before the folder goes: so the peak is at the end of assembly, with every segment and
// the whole output on disk at once, plus the model files a run has to install first. The input,
// already where the plan probed it, counts only on a machine it must be copied to.
//
// Sizes come from bits per output pixel: measured by `framelift profile` on a sample of the job
// (the manifest's encoder entry, keyframes apart from the rest) when a calibration has the codec,
// else a table by codec at its default quality, scaled for --crf.
#include <optional>
#include <string>

#include "plan/calibration.h"
#include "plan/job.h"

namespace framelift::plan {

// Bits per pixel of `codec`'s output from the table: what a GOP of 1080p film takes on average at
// `crf` (nullopt: the encoder's default), for an output format of `raw_bits` uncompressed bits
// per pixel (12: 8-bit 4:2:0). Lossless codecs scale with raw_bits, lossy ones do not.
double table_bits_per_pixel(const std::string& codec, std::optional<double> crf, double raw_bits);

// How much bigger a crf-coded output gets going from `from` to `to` (x264, x265 and SVT-AV1 double
// their bitrate about every 6 steps down; nullopt: the encoder's default); 1 for other codecs.
double crf_size_factor(const std::string& codec, std::optional<double> from, std::optional<double> to);

// Frames between the keyframes `codec` places by itself: x264 and x265 250 (their keyint), 1 for
// intra-only codecs (ProRes), else FFmpeg's default GOP of 12 (FFV1). Every segment starts with
// one besides.
int keyframe_interval(const std::string& codec);

struct DiskEstimate {
  double bits_per_pixel = 0;   // output video, the mean over the job's segments (keyframes included)
  std::string bits_from;       // "table", or the manifest that measured the codec
  double segments_bytes = 0;   // every segment, kept until the output is assembled
  double output_bytes = 0;     // the assembled output: the segments' video and the source's other streams
  double model_bytes = 0;      // model files to install first (Job::model_bytes)
  double input_bytes = 0;      // the input: only where it must be copied to
  // What the job holds at once: segments, output and models (the input is where it is).
  double peak_bytes() const { return segments_bytes + output_bytes + model_bytes; }
};

DiskEstimate estimate_disk(const Job& job, const Calibration& calibration);

// Container bytes a Matroska file adds to its packets: per file (header, track, cues) and per frame.
constexpr double kContainerBytesPerFile = 4096;
constexpr double kContainerBytesPerFrame = 16;

}  // namespace framelift::plan
