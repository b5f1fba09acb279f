#pragma once
// Small helpers shared by the ncnn ops: axis mapping between ncnn and batched tensors, and the
// ownership test that decides whether an op may overwrite its input.
#include <ATen/core/Tensor.h>

namespace framelift::models::ncnn {

// ncnn rank of a batched blob.
inline int ncnn_dims(const at::Tensor& t) { return static_cast<int>(t.dim()) - 1; }

// ncnn axis (negative counts from the end of the ncnn shape) -> tensor dim; -1 when out of range.
inline int64_t tensor_axis(int ncnn_axis, int dims) {
  int a = ncnn_axis < 0 ? ncnn_axis + dims : ncnn_axis;
  return (a < 0 || a >= dims) ? -1 : a + 1;
}

// True when nobody else can observe this tensor's memory: no other handle to the tensor (Split
// outputs share one) and no view onto its storage (Crop and Slice return views).
inline bool owned(const at::Tensor& t) {
  return t.defined() && t.use_count() == 1 && t.storage().use_count() == 1;
}

}  // namespace framelift::models::ncnn
