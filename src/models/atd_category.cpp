#include "models/atd_category.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace framelift::models {

CategoryAttention::CategoryAttention(WeightReader& r, const std::string& p, int64_t c, int64_t heads, int64_t category, bool qkv_bias)
    : heads_(heads),
      category_(category),
      logit_scale_(r.tensor(p + ".logit_scale", {1, 1})),
      proj_{r.tensor(p + ".proj.weight", {c, c}), qkv_bias ? r.tensor(p + ".proj.bias", {c}) : at::Tensor()} {}

at::Tensor CategoryAttention::operator()(const at::Tensor& qkv, const at::Tensor& sim) const {
  const int64_t b = qkv.size(0), n = qkv.size(1), c3 = qkv.size(2), c = c3 / 3, d = c / heads_;
  const int64_t gs = std::min(n, category_), groups = (n + gs - 1) / gs, pad = groups * gs - n;
  // The same unstable sort as upstream (torch.sort(stable=False)): most tokens share a category,
  // and which of the tied tokens fall into which group is that sort's order. Same kernel, same order.
  const at::Tensor order = std::get<1>(at::sort(sim.argmax(-1), /*stable=*/false, -1, false));  // [B, N]
  // float32 in bf16 runs too (atd.cpp's island): the logits are scaled by up to 100.
  const at::Tensor sorted = qkv.to(at::kFloat).gather(1, order.unsqueeze(-1).expand({b, n, c3}));
  // The last group is filled up with the sorted tail mirrored (upstream's torch.flip).
  const at::Tensor filled = pad ? at::cat({sorted, sorted.narrow(1, n - pad, pad).flip({1})}, 1) : sorted;
  const at::Tensor parts = filled.reshape({b, groups, gs, 3, heads_, d}).permute({3, 0, 1, 4, 2, 5});  // 3, B, G, heads, gs, d
  const at::Tensor scale = logit_scale_.clamp_max(std::log(1.0 / 0.01)).exp();
  const at::Tensor attn = at::softmax(at::matmul(parts[0], parts[1].transpose(-2, -1)) * scale, -1);
  const at::Tensor y = at::matmul(attn, parts[2]).permute({0, 1, 3, 2, 4}).reshape({b, n + pad, c}).narrow(1, 0, n);
  // Back in place: the inverse permutation of the sort.
  const at::Tensor inverse = at::empty_like(order).scatter_(-1, order, at::arange(n, order.options()).expand({b, n}));
  return proj_(y.gather(1, inverse.unsqueeze(-1).expand({b, n, c})).to(qkv.scalar_type()));
}

void CategoryAttention::visit_weights(const TensorVisitor& f) {
  at::Tensor probe = logit_scale_;  // kept float32, moved with the rest
  f(probe);
  logit_scale_ = logit_scale_.to(probe.device(), at::kFloat);
  proj_.visit_weights(f);
}

}  // namespace framelift::models
