#pragma once
// The convolutions around the transformer body of the SwinIR lineage (SwinIR, HAT, DAT), which
// upstream copies from file to file: the residual convolution a group or the body ends with, and
// the classical-SR pixel-shuffle upsampler.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/native_model.h"

namespace framelift::models {

// resi_connection "1conv": one 3x3; "3conv": 3x3 to C/4, LeakyReLU(0.2), 1x1, LeakyReLU(0.2), 3x3
// back to C ("<prefix>.0", ".2", ".4").
struct ResidualConv {
  std::vector<Conv2d> convs;
  at::Tensor operator()(const at::Tensor& x) const;
  void visit_weights(const TensorVisitor& f);
};
ResidualConv read_residual_conv(WeightReader& r, const std::string& prefix, int64_t channels, bool three);

// Per factor of 2 a 3x3 conv to 4 feat and a shuffle by 2, or for x3 one conv to 9 feat and a
// shuffle by 3: "<prefix>.0", "<prefix>.2", ... (upstream's nn.Sequential of convs and shuffles).
struct PixelShuffleUpsampler {
  std::vector<Conv2d> convs;
  std::vector<int64_t> factors;
  at::Tensor operator()(const at::Tensor& x) const;
  void visit_weights(const TensorVisitor& f);
};
PixelShuffleUpsampler read_pixel_shuffle_upsampler(WeightReader& r, const std::string& prefix, int64_t feat, int64_t scale);

// The upsampler's scale from its convolutions' shapes; an error text naming the conv that is not
// a x2 or x3 pixel-shuffle step.
struct UpsamplerScale {
  int64_t scale = 1;
  std::string error;
};
UpsamplerScale pixel_shuffle_scale(const weights::StateDict& dict, const std::string& prefix);

}  // namespace framelift::models
