#pragma once
// Element-wise ops whose libtorch 1.13 CPU kernel is slow on a channels-last tensor, run on the
// same memory seen as a contiguous NHWC tensor instead (identical values, same layout out). Found
// by the speed grid (bench/speed_grid.cpp): at::gelu on a channels-last map is 6x (fp32) to 9x
// (bf16) slower than on the same map contiguous (1.83 vs 0.32 ms for 128 channels at 64x64), and
// it runs after every PLKSR, OmniSR, SAFMN, DAT and ATD mixer. Other tensors pass straight through.
#include <ATen/core/Tensor.h>

namespace framelift::infer {

at::Tensor gelu(const at::Tensor& x);

}  // namespace framelift::infer
