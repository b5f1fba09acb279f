#pragma once
// The activation ncnn fuses into Convolution, Deconvolution and InnerProduct (param 9 = type,
// param 10 = its arguments): 0 none, 1 relu, 2 leakyrelu(slope), 3 clip(min, max), 4 sigmoid,
// 5 mish, 6 hardswish(alpha, beta).
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/ncnn/ncnn_op.h"

namespace framelift::models::ncnn {

struct FusedActivation {
  int type = 0;
  std::vector<float> params;

  static FusedActivation from(const LayerSpec& spec);  // validates the type
  // Applies in place: callers pass a tensor they just computed.
  void apply_(at::Tensor& x) const;
};

}  // namespace framelift::models::ncnn
