#include "infer/layout_ops.h"

#include <ATen/ATen.h>

namespace framelift::infer {
namespace {

bool channels_last_only(const at::Tensor& x) {
  return x.dim() == 4 && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast);
}

}  // namespace

at::Tensor gelu(const at::Tensor& x) {
  if (!channels_last_only(x)) return at::gelu(x);
  return at::gelu(x.permute({0, 2, 3, 1})).permute({0, 3, 1, 2});
}

}  // namespace framelift::infer
