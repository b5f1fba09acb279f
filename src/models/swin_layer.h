#pragma once
// The Swin transformer layer (Liu et al. 2021) as SwinIR and DRCT run it, and HAT's HAB around a
// conv branch: x + attention(LayerNorm(x)) in ws x ws windows, rolled by half a window in a
// shifted layer, with a learned bias per head and relative offset; then x + MLP(LayerNorm(x))
// with an exact GELU.
// Keys (upstream's): <p>.norm1, <p>.attn.{qkv, proj, relative_position_bias_table,
// relative_position_index}, <p>.norm2, <p>.mlp.{fc1, fc2}, and a shifted layer's <p>.attn_mask
// (the training crop's, optional; the mask is rebuilt per input size by the caller).
#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>

#include "models/native_model.h"
#include "models/swin_layout.h"
#include "models/token_layers.h"

namespace framelift::models {

struct SwinLayerSize {
  int64_t channels, heads, hidden, window, shift;  // shift 0: not shifted
  // relative_position_index and attn_mask stored with the layer (HAT keeps one index for the network)
  bool own_buffers = true;
};

class SwinLayer {
 public:
  SwinLayer(WeightReader& r, const std::string& p, const SwinLayerSize& s);
  // A layer of a SwinIR-layout body (read_swin_group's), every second one shifted.
  SwinLayer(WeightReader& r, const std::string& p, const SwinShape& s, bool shifted)
      : SwinLayer(r, p, {s.embed, s.heads, s.hidden, s.window, shifted ? s.window / 2 : 0}) {}

  // x: [B, H, W, C]; mask: the shift mask for H x W, which an unshifted layer leaves out.
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& mask) const { return feed_forward(x + attention(norm1(x), mask)); }

  // The halves, for a block that adds a branch beside the attention (HAT's HAB):
  at::Tensor norm1(const at::Tensor& x) const { return norm1_(x); }
  at::Tensor attention(const at::Tensor& normed, const at::Tensor& mask) const;  // windowed, projected
  at::Tensor feed_forward(const at::Tensor& z) const;                            // z + MLP(LayerNorm(z))

  void visit_weights(const TensorVisitor& f);

 private:
  int64_t heads_, window_, shift_;
  LayerNorm norm1_;
  Linear qkv_, proj_;
  LayerNorm norm2_;
  Linear fc1_, fc2_;
  at::Tensor bias_;  // [heads, n, n]: each token pair's bias, gathered once instead of on every call
};

}  // namespace framelift::models
