#pragma once
// The token-layout layers of the transformer networks (SwinIR, HAT, ...): LayerNorm over the last
// (channel) axis, linear layers, and multi-head attention with an additive per-head bias and an
// optional window mask. Tokens are [..., C]; the networks keep maps channels-last in between.
#include <string>

#include <ATen/core/Tensor.h>

#include "models/native_model.h"

namespace framelift::models {

struct LayerNorm {
  at::Tensor weight, bias;  // [C]
  at::Tensor operator()(const at::Tensor& x) const;  // eps 1e-5, nn.LayerNorm's default
  void visit_weights(const TensorVisitor& f);
};
LayerNorm read_layer_norm(WeightReader& r, const std::string& prefix, int64_t channels);

// LayerNorm over the channels of a [B, C, H, W] map (upstream "LayerNorm2d" / channels_first:
// biased variance, eps inside the square root): nn.LayerNorm on the channels-last view.
struct ChannelNorm {
  at::Tensor weight, bias;  // [C]
  double eps = 1e-6;
  at::Tensor operator()(const at::Tensor& x) const;
  void visit_weights(const TensorVisitor& f);
};
ChannelNorm read_channel_norm(WeightReader& r, const std::string& prefix, int64_t channels, double eps = 1e-6);

// A depthwise convolution (groups = channels; read_conv stores it as [C, 1, k, k]).
at::Tensor depthwise(const Conv2d& c, const at::Tensor& x);

struct Linear {
  at::Tensor weight, bias;  // [out, in], [out]
  at::Tensor operator()(const at::Tensor& x) const;
  void visit_weights(const TensorVisitor& f);
};
Linear read_linear(WeightReader& r, const std::string& prefix, int64_t in, int64_t out);

// softmax(q k^T / sqrt(d) + bias [+ mask]) v, heads split from the channels and merged back.
// q [B, Nq, C], k and v [B, Nk, C]; bias [heads, Nq, Nk]; mask [nW, Nq, Nk] for B = batches * nW
// windows (undefined: none). Returns [B, Nq, C].
at::Tensor biased_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t heads,
                            const at::Tensor& bias, const at::Tensor& mask);

// Swin V2's scaled cosine attention: softmax(cos(q, k) * scale + bias [+ mask]) v, q and k
// L2-normalised per head (eps 1e-12, F.normalize's); scale [heads, 1, 1], the rest as above.
at::Tensor cosine_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t heads,
                            const at::Tensor& scale, const at::Tensor& bias, const at::Tensor& mask);

// DAT's dynamic position bias (after CrossFormer): an MLP from each relative offset (dy, dx) of a
// wh x ww window to a bias per head, "<prefix>.pos_proj" (2 -> dim), then pos1, pos2 (each
// LayerNorm, ReLU, Linear dim -> dim: ".0", ".2") and pos3 (to heads), without residuals. It
// depends on the weights alone, so it is evaluated once: [heads, wh ww, wh ww].
at::Tensor dynamic_position_bias(WeightReader& r, const std::string& prefix, int64_t dim, int64_t heads, int64_t wh, int64_t ww);

// The per-head bias of every (query, key) token pair gathered from a relative-position table
// [rows, heads] by an index [Nq, Nk]: [heads, Nq, Nk].
at::Tensor gathered_bias(const at::Tensor& table, const at::Tensor& index);

}  // namespace framelift::models
