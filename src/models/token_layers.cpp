#include "models/token_layers.h"

#include <ATen/ATen.h>

#include <cmath>

#include "infer/conv_layout.h"
#include "infer/fp32_islands.h"
#include "models/swin_windows.h"

namespace framelift::models {

at::Tensor LayerNorm::operator()(const at::Tensor& x) const {
  return infer::layer_norm(x, {weight.size(0)}, weight, bias, 1e-5);
}

void LayerNorm::visit_weights(const TensorVisitor& f) {
  f(weight);
  f(bias);
}

LayerNorm read_layer_norm(WeightReader& r, const std::string& prefix, int64_t channels) {
  return {r.tensor(prefix + ".weight", {channels}), r.tensor(prefix + ".bias", {channels})};
}

at::Tensor ChannelNorm::operator()(const at::Tensor& x) const {
  return infer::layer_norm(x.permute({0, 2, 3, 1}), {weight.size(0)}, weight, bias, eps).permute({0, 3, 1, 2});
}

void ChannelNorm::visit_weights(const TensorVisitor& f) {
  f(weight);
  f(bias);
}

ChannelNorm read_channel_norm(WeightReader& r, const std::string& prefix, int64_t channels, double eps) {
  return {r.tensor(prefix + ".weight", {channels}), r.tensor(prefix + ".bias", {channels}), eps};
}

at::Tensor depthwise(const Conv2d& c, const at::Tensor& x) {
  return infer::conv2d(x, c.weight, c.bias, c.stride, c.padding, 1, c.weight.size(0));
}

at::Tensor Linear::operator()(const at::Tensor& x) const { return at::linear(x, weight, bias); }

void Linear::visit_weights(const TensorVisitor& f) {
  f(weight);
  f(bias);
}

Linear read_linear(WeightReader& r, const std::string& prefix, int64_t in, int64_t out) {
  return {r.tensor(prefix + ".weight", {out, in}), r.tensor(prefix + ".bias", {out})};
}

namespace {

// [B, N, C] -> [B, heads, N, C / heads].
at::Tensor split_heads(const at::Tensor& t, int64_t heads) {
  return t.reshape({t.size(0), t.size(1), heads, t.size(2) / heads}).permute({0, 2, 1, 3});
}

// softmax(scores + bias [+ mask]) v for scores [B, heads, Nq, Nk], merged back to [B, Nq, C].
at::Tensor attend(at::Tensor scores, const at::Tensor& v, int64_t heads, const at::Tensor& bias, const at::Tensor& mask) {
  const int64_t b = scores.size(0), nq = scores.size(2), nk = scores.size(3);
  scores = scores + bias.unsqueeze(0);
  if (mask.defined()) {
    const int64_t nw = mask.size(0);
    scores = (scores.view({b / nw, nw, heads, nq, nk}) + mask.unsqueeze(1).unsqueeze(0)).view({b, heads, nq, nk});
  }
  return at::matmul(at::softmax(scores, -1), split_heads(v, heads)).transpose(1, 2).reshape({b, nq, v.size(2)});
}

}  // namespace

at::Tensor biased_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t heads,
                            const at::Tensor& bias, const at::Tensor& mask) {
  const double d = double(q.size(2) / heads);
  return attend(at::matmul(split_heads(q, heads) * (1.0 / std::sqrt(d)), split_heads(k, heads).transpose(-2, -1)), v, heads, bias, mask);
}

at::Tensor cosine_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t heads,
                            const at::Tensor& scale, const at::Tensor& bias, const at::Tensor& mask) {
  auto unit = [&](const at::Tensor& t) {
    const at::Tensor h = split_heads(t, heads);
    return h / h.norm(2, -1, true).clamp_min(1e-12);
  };
  return attend(at::matmul(unit(q), unit(k).transpose(-2, -1)) * scale, v, heads, bias, mask);
}

at::Tensor dynamic_position_bias(WeightReader& r, const std::string& prefix, int64_t dim, int64_t heads, int64_t wh, int64_t ww) {
  const int64_t n = wh * ww;
  at::Tensor table = read_linear(r, prefix + ".pos_proj", 2, dim)(relative_offsets(wh, ww));
  for (int i = 1; i <= 3; ++i) {
    const std::string p = prefix + ".pos" + std::to_string(i);
    const LayerNorm norm = read_layer_norm(r, p + ".0", dim);
    table = read_linear(r, p + ".2", dim, i == 3 ? heads : dim)(at::relu(norm(table)));
  }
  return gathered_bias(table, relative_position_index(wh, ww)).view({heads, n, n});
}

at::Tensor gathered_bias(const at::Tensor& table, const at::Tensor& index) {
  const int64_t nq = index.size(0), nk = index.size(1);
  return table.index_select(0, index.reshape({-1})).view({nq, nk, table.size(1)}).permute({2, 0, 1}).contiguous();
}

}  // namespace framelift::models
