#pragma once
// The layers PLKSR and RealPLKSR share (plksr.cpp, realplksr.cpp): the partial large-kernel
// convolution, the element-wise attention and the residual both add before their upsampler.
#include <ATen/core/Tensor.h>

#include "models/native_model.h"

namespace framelift::models {

// A large kernel over the first `channels` feature channels only (the paper's split ratio); the
// others pass through. Upstream writes the result into its input in place at eval time, which is
// the concatenation done here.
struct PartialConv {
  Conv2d conv;
  at::Tensor operator()(const at::Tensor& x) const;
};

// x * sigmoid(conv3x3(x)); absent (identity) when the checkpoint has no "attn" weights.
struct ElementAttention {
  Conv2d conv;
  at::Tensor operator()(const at::Tensor& x) const;
};

// Both networks add the input, each channel repeated scale^2 times, to the features before the
// upsampler: after a pixel shuffle that is a nearest-neighbour upscale of the input.
at::Tensor repeat_channels(const at::Tensor& x, int64_t scale);

// Blocks of both networks sit at feats.1 .. feats.N; the last index holding keys, + 1.
int feats_length(const weights::StateDict& dict);

}  // namespace framelift::models
