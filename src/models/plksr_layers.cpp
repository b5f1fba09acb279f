#include "models/plksr_layers.h"

#include <ATen/ATen.h>

#include "models/state_dict_keys.h"

namespace framelift::models {

at::Tensor PartialConv::operator()(const at::Tensor& x) const {
  const int64_t p = conv.weight.size(0);
  return at::cat({conv(x.narrow(1, 0, p)), x.narrow(1, p, x.size(1) - p)}, 1);
}

at::Tensor ElementAttention::operator()(const at::Tensor& x) const {
  if (!conv.weight.defined()) return x;
  return x * at::sigmoid(conv(x));
}

at::Tensor repeat_channels(const at::Tensor& x, int64_t scale) {
  return scale == 1 ? x : at::repeat_interleave(x, scale * scale, 1);
}

int feats_length(const weights::StateDict& dict) {
  const std::set<int> indices = key_indices(dict, "feats.");
  return indices.empty() ? 0 : *indices.rbegin() + 1;
}

}  // namespace framelift::models
