#include "models/swin_layer.h"

#include <ATen/ATen.h>

#include <vector>

#include "infer/layout_ops.h"
#include "models/swin_windows.h"

namespace framelift::models {

SwinLayer::SwinLayer(WeightReader& r, const std::string& p, const SwinLayerSize& s)
    : heads_(s.heads),
      window_(s.window),
      shift_(s.shift),
      norm1_(read_layer_norm(r, p + ".norm1", s.channels)),
      qkv_(read_linear(r, p + ".attn.qkv", s.channels, 3 * s.channels)),
      proj_(read_linear(r, p + ".attn.proj", s.channels, s.channels)),
      norm2_(read_layer_norm(r, p + ".norm2", s.channels)),
      fc1_(read_linear(r, p + ".mlp.fc1", s.channels, s.hidden)),
      fc2_(read_linear(r, p + ".mlp.fc2", s.hidden, s.channels)) {
  const int64_t n = s.window * s.window, span = 2 * s.window - 1;
  const at::Tensor table = r.tensor(p + ".attn.relative_position_bias_table", {span * span, s.heads});
  if (s.own_buffers) {
    r.recomputed(p + ".attn.relative_position_index", {n, n});  // a pure function of the window
    if (s.shift && r.has(p + ".attn_mask")) r.recomputed(p + ".attn_mask", {-1, n, n});
  }
  bias_ = gathered_bias(table, relative_position_index(s.window));
}

at::Tensor SwinLayer::attention(const at::Tensor& normed, const at::Tensor& mask) const {
  const at::Tensor m = shift_ ? mask : at::Tensor();
  return in_windows(normed, window_, shift_, [&](const at::Tensor& t) {
    const std::vector<at::Tensor> qkv = qkv_(t).chunk(3, -1);
    return proj_(biased_attention(qkv[0], qkv[1], qkv[2], heads_, bias_, m));
  });
}

at::Tensor SwinLayer::feed_forward(const at::Tensor& z) const { return z + fc2_(infer::gelu(fc1_(norm2_(z)))); }

void SwinLayer::visit_weights(const TensorVisitor& f) {
  for (LayerNorm* n : {&norm1_, &norm2_}) n->visit_weights(f);
  for (Linear* l : {&qkv_, &proj_, &fc1_, &fc2_}) l->visit_weights(f);
  f(bias_);
}

}  // namespace framelift::models
