#pragma once
// ncnn's broadcasting for two-input arithmetic. Unlike numpy, a lower-rank operand is aligned to
// the *outer* axes: a 1-D blob of c values against a (c, h, w) blob scales each channel (this is
// how squeeze-excitation blocks multiply by their InnerProduct output). The exception is a 1-D
// blob whose length equals the other's w and not its outer axis: that one aligns to w.
// https://github.com/Tencent/ncnn/wiki/binaryop-broadcasting
#include <string>
#include <utility>

#include <ATen/core/Tensor.h>

namespace framelift::models::ncnn {

// Returns views of a and b whose shapes broadcast in ATen the way ncnn broadcasts them.
std::pair<at::Tensor, at::Tensor> ncnn_broadcast(const at::Tensor& a, const at::Tensor& b, const std::string& layer);

// A 1-D per-outer-axis vector (per channel for 3-D blobs) viewed to broadcast against x.
at::Tensor outer_axis_view(const at::Tensor& v, const at::Tensor& x);

}  // namespace framelift::models::ncnn
