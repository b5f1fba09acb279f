#include "plan/media_rates.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace framelift::plan {
namespace {

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// 0 fast, 1 medium (the default), 2 slow, from x264/x265 names, NVENC p1-p7 and SVT-AV1 0-13.
int preset_class(const std::string& codec, const std::string& preset) {
  if (preset.empty()) return 1;
  if (preset.size() == 2 && preset[0] == 'p' && std::isdigit(static_cast<unsigned char>(preset[1])))
    return preset[1] <= '3' ? 0 : preset[1] <= '5' ? 1 : 2;
  if (has(codec, "svtav1") && std::all_of(preset.begin(), preset.end(), ::isdigit)) {
    const int p = std::atoi(preset.c_str());
    return p >= 8 ? 0 : p >= 5 ? 1 : 2;
  }
  if (has(preset, "fast") || preset == "superfast" || preset == "ultrafast") return 0;
  if (has(preset, "slow") || preset == "placebo") return 2;
  return 1;
}

// Megapixels/s per NVENC engine (one session uses one engine; split-frame encoding is ignored),
// from the NVENC application note's tables for 1080p, rounded down: fast/medium/slow.
double nvenc_mpx(const std::string& family, int cls) {
  static const double h264[3] = {1300, 900, 450}, hevc[3] = {1100, 700, 300};
  return (family == "h264" ? h264 : hevc)[cls];
}

// Megapixels/s per CPU thread for software encoders at 8 bits: fast/medium/slow.
double software_mpx(const std::string& codec, int cls) {
  static const double x264[3] = {25, 14, 6}, x265[3] = {6, 3.5, 1.5}, svt[3] = {12, 5, 1.5};
  if (has(codec, "x264")) return x264[cls];
  if (has(codec, "x265")) return x265[cls];
  if (has(codec, "svtav1") || has(codec, "aom") || has(codec, "rav1e")) return svt[cls];
  if (has(codec, "ffv1")) return 25;
  if (has(codec, "prores")) return 20;
  return 5;
}

std::string family(const std::string& codec) {
  if (has(codec, "264")) return "h264";
  if (has(codec, "265") || has(codec, "hevc")) return "hevc";
  if (has(codec, "av1")) return "av1";
  return codec;
}

}  // namespace

EncodePlan encode_plan(const std::string& codec, const std::string& preset, const Device& device, double threads,
                       const Calibration& calibration) {
  EncodePlan e;
  e.codec = codec;
  const int cls = preset_class(codec, preset);
  const std::string fam = family(codec);
  if (has(codec, "_nvenc")) {
    const bool can = device.nvenc > 0 && (fam != "av1" || device.av1_encode);
    if (can) {
      e.on_gpu = true;
      e.mpx_per_s = nvenc_mpx(fam == "h264" ? "h264" : "hevc", cls);
      return e;
    }
    e.fell_back = true;
    e.codec = fam == "h264" ? "libx264" : fam == "hevc" ? "libx265" : "libsvtav1";
  }
  // x264 and x265 stop scaling at about 16 threads on one stream.
  e.cpu_threads = has(e.codec, "x26") ? std::min(threads, 16.0) : threads;
  const double measured = calibration.encoder_mpx_per_thread(e.codec, preset);
  // SMT threads add about 25% over cores, not 100%: a vCPU is worth 0.6 of a core's rate.
  e.mpx_per_s = (measured > 0 ? measured : software_mpx(e.codec, cls) * 0.6) * e.cpu_threads;
  return e;
}

double decode_mpx_per_s(double threads) { return 60.0 * std::min(threads, 8.0); }

}  // namespace framelift::plan
