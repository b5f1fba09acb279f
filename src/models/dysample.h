#pragma once
// DySample ("Learning to Upsample by Learning to Sample", Liu et al. 2023), the upsampler
// RealPLKSR may end with: 1x1 convolutions predict, per output pixel and channel group, where to
// sample the features (init_pos: the sub-pixel grid; offset and a sigmoid "scope" move it), the
// features are sampled there bilinearly (border padding) and a 1x1 maps them to the output.
//
// State dict under its prefix: offset.{weight,bias}, scope.weight, init_pos, end_conv (absent
// at scale 1). Upstream: tiny-smart/dysample, as spandrel's __arch_helpers/dysample.py has it.
#include <ATen/core/Tensor.h>

#include "models/native_model.h"

namespace framelift::models {

class DySample {
 public:
  DySample() = default;
  // `in` channels (3 * scale^2 in RealPLKSR), in `groups` sampling groups, to `out` channels.
  DySample(WeightReader& r, const std::string& prefix, int64_t in, int64_t out, int64_t scale, int64_t groups);

  at::Tensor operator()(const at::Tensor& x) const;
  void visit_weights(const TensorVisitor& f);

 private:
  // Sampling positions for grid_sample: [N * groups, scale * H, scale * W, 2], in [-1, 1].
  at::Tensor grid(const at::Tensor& x) const;

  int64_t scale_ = 1, groups_ = 1;
  Conv2d offset_, scope_, end_;
  at::Tensor init_pos_;
};

}  // namespace framelift::models
