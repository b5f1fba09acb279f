#include "plan/disk_model.h"

#include <algorithm>
#include <cmath>

namespace framelift::plan {
namespace {

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

bool lossless(const std::string& codec) { return has(codec, "ffv1") || has(codec, "utvideo") || has(codec, "huffyuv"); }

// The encoder's own crf when none is given (FFmpeg 5.1's wrappers of x264, x265, SVT-AV1).
std::optional<double> default_crf(const std::string& codec) {
  if (has(codec, "x264")) return 23;
  if (has(codec, "x265")) return 28;
  if (has(codec, "svtav1")) return 35;
  return std::nullopt;
}

}  // namespace

double table_bits_per_pixel(const std::string& codec, std::optional<double> crf, double raw_bits) {
  // A GOP's mean on 1080p film at the default quality; FFV1 keeps about 45% of the raw bits of
  // camera footage (less for animation and upscaled frames, which are smoother).
  double bits = 0.1;
  if (has(codec, "264")) bits = 0.10;
  else if (has(codec, "265") || has(codec, "hevc")) bits = 0.06;
  else if (has(codec, "av1")) bits = 0.045;
  else if (has(codec, "prores")) bits = 3.5;
  else if (lossless(codec)) bits = 0.45 * raw_bits;
  return bits * crf_size_factor(codec, default_crf(codec), crf);
}

double crf_size_factor(const std::string& codec, std::optional<double> from, std::optional<double> to) {
  const std::optional<double> fallback = default_crf(codec);
  if (!fallback) return 1;
  return std::exp2((from.value_or(*fallback) - to.value_or(*fallback)) / 6);
}

int keyframe_interval(const std::string& codec) {
  if (has(codec, "x264") || has(codec, "x265")) return 250;  // their keyint
  if (has(codec, "prores") || has(codec, "utvideo") || has(codec, "huffyuv")) return 1;  // intra only
  return 12;  // FFmpeg's default GOP, which FFV1 (a keyframe resets its context model) and others take
}

DiskEstimate estimate_disk(const Job& job, const Calibration& calibration) {
  DiskEstimate d;
  const double frames = double(job.out_frames());
  const double pixels = double(job.out_width()) * job.out_height();
  // Segments are cut about segment_s apart (docs/jobs.md); each one starts with a keyframe.
  const double per_segment_in = std::max(1.0, job.segment_s * job.fps);
  const double segments = std::max(1.0, std::round(double(job.frames) / per_segment_in));
  const double frames_per_segment = frames / segments;
  const double keyframes = segments * std::ceil(frames_per_segment / keyframe_interval(job.codec));
  if (const auto measured = calibration.video_bits(job.codec)) {
    const double scale = crf_size_factor(job.codec, measured->crf, job.crf);
    const double key = std::min(keyframes, frames);
    const double bits = (key * measured->key_bits_per_pixel + (frames - key) * measured->other_bits_per_pixel) * scale;
    d.bits_per_pixel = frames > 0 ? bits / frames : 0;
    d.bits_from = measured->manifest;
  } else {
    d.bits_per_pixel = table_bits_per_pixel(job.codec, job.crf, job.raw_bits_per_pixel);
    d.bits_from = "table";
  }
  const double video = d.bits_per_pixel * pixels * frames / 8;
  d.segments_bytes = video + segments * kContainerBytesPerFile + frames * kContainerBytesPerFrame;
  d.output_bytes = video + job.other_stream_bytes + kContainerBytesPerFile + frames * kContainerBytesPerFrame;
  d.model_bytes = job.model_bytes;
  d.input_bytes = job.input_bytes;
  return d;
}

}  // namespace framelift::plan
