#pragma once
// Zero-filled state dicts in the SwinIR lineage's upstream layout (SwinIR, Swin2SR): what their
// detectors read is keys and shapes only. Each architecture's test adds its own layers; these are
// the parts the two share, and the hyper-parameters both detectors record.
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

}  // namespace framelift::test
