#pragma once
// What the SwinIR lineage's tests (SwinIR, Swin2SR) share: zero-filled state dicts in the upstream
// layout (what the detectors read is keys and shapes only; each test adds its own layers), the
// hyper-parameters both detectors record, and the checks each runs on its committed references.
#include <cstdint>
#include <string>

#include "models/architecture.h"
#include "weights/state_dict.h"

namespace framelift::test {

enum SwinUpsampler { kNone = 0, kPixelShuffle = 1, kDirect = 2, kNearestConv = 3 };

struct SwinConfig {
  int64_t in = 3, embed = 180, layers = 6, depth = 6, heads = 6, window = 8, hidden = 360, scale = 4;
  SwinUpsampler upsampler = kPixelShuffle;
  bool three_conv = false;
  int64_t img_size = 64;  // the training crop, which sizes the stored shift masks
};

void zero_conv(weights::StateDict& d, const std::string& prefix, int64_t in, int64_t out, int64_t k);
void zero_norm(weights::StateDict& d, const std::string& prefix, int64_t channels);  // weight and bias
void zero_linear(weights::StateDict& d, const std::string& prefix, int64_t in, int64_t out);
// "1conv" or "3conv" at `prefix`.
void zero_residual_conv(weights::StateDict& d, const std::string& prefix, const SwinConfig& c);
// The norm, conv_after_body and the reconstruction after the body.
void zero_swin_tail(weights::StateDict& d, const SwinConfig& c);

void expect_swin_detected_as(const models::DetectedArch& d, const SwinConfig& c, const std::string& arch);

// The committed reference NAME (tests/data/arch: NAME.pth, NAME.ref.safetensors) detected as
// `arch` with c's hyper-parameters, its window the size multiple, and its output on the
// reference input (odd sizes: the runner's reflect padding, then the crop, as upstream) within
// 80 dB of upstream's in fp32.
void expect_swin_reference_matches_upstream(const std::string& name, const SwinConfig& c, const std::string& arch);

// On a real 101x75 frame: 40 px tiles with the declared 32 px of context within 50 dB of the
// whole frame, without context under 50 dB (seams: the check would catch a wrong overlap), and
// bf16 within 40 dB of fp32.
void expect_swin_tiles_and_bf16_match(const std::string& name);

}  // namespace framelift::test
