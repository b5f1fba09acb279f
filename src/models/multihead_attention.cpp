#include "models/multihead_attention.h"

#include <ATen/ATen.h>

#include <cmath>

namespace framelift::models {

at::Tensor MultiheadAttention::operator()(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) const {
  const int64_t c = q.size(2), d = c / heads;
  const auto project = [&](const at::Tensor& x, int64_t i) {
    const at::Tensor y = at::linear(x, in_w.narrow(0, i * c, c), in_b.narrow(0, i * c, c));
    return y.view({x.size(0), x.size(1), heads, d}).transpose(1, 2);  // [N, heads, L, d]
  };
  const at::Tensor qh = project(q, 0) * (1.0 / std::sqrt(double(d))), kh = project(k, 1), vh = project(v, 2);
  const at::Tensor a = at::softmax(at::matmul(qh, kh.transpose(-2, -1)), -1);
  return out(at::matmul(a, vh).transpose(1, 2).reshape({q.size(0), q.size(1), c}));
}

void MultiheadAttention::visit_weights(const TensorVisitor& f) {
  f(in_w);
  f(in_b);
  out.visit_weights(f);
}

MultiheadAttention read_multihead_attention(WeightReader& r, const std::string& prefix, int64_t c, int64_t heads) {
  return {r.tensor(prefix + ".in_proj_weight", {3 * c, c}), r.tensor(prefix + ".in_proj_bias", {3 * c}),
          read_linear(r, prefix + ".out_proj", c, c), heads};
}

}  // namespace framelift::models
