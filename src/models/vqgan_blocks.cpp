#include "models/vqgan_blocks.h"

#include <ATen/ATen.h>

#include "infer/fp32_islands.h"

namespace framelift::models {

at::Tensor VqganGroupNorm::operator()(const at::Tensor& x) const { return infer::group_norm(x, 32, weight, bias, 1e-6); }

VqganGroupNorm read_vqgan_group_norm(WeightReader& r, const std::string& prefix, int64_t c) {
  return {r.tensor(prefix + ".weight", {c}), r.tensor(prefix + ".bias", {c})};
}

at::Tensor VqganResBlock::operator()(const at::Tensor& x) const {
  const at::Tensor h = conv2(at::silu(norm2(conv1(at::silu(norm1(x))))));
  return h + (shortcut.weight.defined() ? shortcut(x) : x);
}

void VqganResBlock::visit_weights(const TensorVisitor& f) {
  for (VqganGroupNorm* n : {&norm1, &norm2}) {
    f(n->weight);
    f(n->bias);
  }
  for (Conv2d* c : {&conv1, &conv2, &shortcut}) visit(*c, f);
}

VqganResBlock read_vqgan_res_block(WeightReader& r, const std::string& prefix, int64_t in, int64_t out, const std::string& shortcut) {
  VqganResBlock b;
  b.norm1 = read_vqgan_group_norm(r, prefix + ".norm1", in);
  b.conv1 = read_conv(r, prefix + ".conv1", in, out, 3);
  b.norm2 = read_vqgan_group_norm(r, prefix + ".norm2", out);
  b.conv2 = read_conv(r, prefix + ".conv2", out, out, 3);
  if (in != out) b.shortcut = read_conv(r, prefix + "." + shortcut, in, out, 1);
  return b;
}

}  // namespace framelift::models
