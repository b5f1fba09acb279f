#include "framelift/values.h"

#include <cmath>
#include <cstdlib>

#include "infer/memory_budget.h"
#include "jobs/shard.h"
#include "lifecycle/lifecycle_options.h"
#include "media/color_conversion.h"
#include "plan/format.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift {
namespace {

// FFmpeg's device type names, in HwAccel's order.
constexpr const char* kHwAccelNames[] = {"none", "auto", "cuda", "vaapi", "qsv", "vdpau",
                                         "videotoolbox", "d3d11va", "dxva2", "drm", "opencl", "vulkan"};

}  // namespace

int64_t parse_byte_size(const std::string& text) { return infer::parse_byte_size(text); }

double parse_duration(const std::string& text, const std::string& option) { return plan::parse_duration(text, option); }

HwAccel parse_hwaccel(const std::string& text) {
  std::string names;
  for (size_t i = 0; i < std::size(kHwAccelNames); ++i) {
    if (text == kHwAccelNames[i]) return HwAccel(i);
    names += (i ? ", " : "") + std::string(kHwAccelNames[i]);
  }
  throw Error(ErrorKind::Usage, str("--hwaccel: unknown device type '", text, "' (", names, ")"));
}

const char* name_of(HwAccel h) { return kHwAccelNames[size_t(h)]; }

ColorConversion parse_color_conversion(const std::string& text) {
  switch (media::parse_color_conversion(text)) {
    case media::ColorConversion::Auto: return ColorConversion::Auto;
    case media::ColorConversion::Swscale: return ColorConversion::Swscale;
    case media::ColorConversion::Tensor: return ColorConversion::Tensor;
  }
  return ColorConversion::Auto;
}

const char* name_of(ColorConversion c) {
  switch (c) {
    case ColorConversion::Auto: return "auto";
    case ColorConversion::Swscale: return "swscale";
    case ColorConversion::Tensor: return "tensor";
  }
  return "auto";
}

PreemptionWatch parse_preemption_watch(const std::string& text) {
  switch (lifecycle::parse_watch_provider(text)) {
    case lifecycle::WatchProvider::Off: return PreemptionWatch::Off;
    case lifecycle::WatchProvider::Auto: return PreemptionWatch::Auto;
    case lifecycle::WatchProvider::Aws: return PreemptionWatch::Aws;
    case lifecycle::WatchProvider::Gcp: return PreemptionWatch::Gcp;
    case lifecycle::WatchProvider::Azure: return PreemptionWatch::Azure;
  }
  return PreemptionWatch::Off;
}

const char* name_of(PreemptionWatch p) {
  switch (p) {
    case PreemptionWatch::Off: return "off";
    case PreemptionWatch::Auto: return "auto";
    case PreemptionWatch::Aws: return "aws";
    case PreemptionWatch::Gcp: return "gcp";
    case PreemptionWatch::Azure: return "azure";
  }
  return "off";
}

Shard parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  if (text.substr(0, slash) == "auto") {
    // Read from the environment when the run starts (jobs::parse_shard), not here: a request
    // may be built on another machine than the worker's.
    Shard s{0, 0, true};
    if (slash == std::string::npos) return s;
    const std::string n = text.substr(slash + 1);
    char* end = nullptr;
    const long count = std::strtol(n.c_str(), &end, 10);
    if (n.empty() || *end != '\0' || count < 1 || count > 1000000)
      throw Error(ErrorKind::Usage, str("--shard ", text, ": '", n, "' is not a number of shards"));
    s.count = int(count);
    return s;
  }
  const jobs::SegmentSelection s = jobs::parse_shard(text);
  return {s.shard, s.shards, false};
}

std::string name_of(const Shard& s) {
  if (s.from_environment) return s.count > 0 ? str("auto/", s.count) : std::string("auto");
  return str(s.index, "/", s.count);
}

SegmentRange parse_segment_range(const std::string& text) {
  const jobs::SegmentSelection s = jobs::parse_segment_range(text);
  return {s.first, s.last};
}

std::string name_of(const SegmentRange& r) {
  return r.last < 0 ? str(r.first, "-end") : r.first == r.last ? str(r.first) : str(r.first, "-", r.last);
}

double parse_hourly_price(const std::string& text) { return lifecycle::parse_hourly_price(text); }

}  // namespace framelift
