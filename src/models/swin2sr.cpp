// Swin2SR (Conde et al. 2022, "Swin2SR: SwinV2 Transformer for Compressed Image Super-Resolution
// and Restoration"): SwinIR's structure (conv_first, residual groups of Swin layers, a LayerNorm,
// conv_after_body plus conv_first's features, the shared reconstructions of
// swin_reconstruction.h) with Swin V2's layers:
//   * post-norm: x + LayerNorm(attention(x)), then x + LayerNorm(MLP(x));
//   * scaled cosine attention: cos(q, k) per head times exp(min(logit_scale, log 100));
//   * a continuous position bias: an MLP (2 -> 512, ReLU, -> heads) of each offset's log-spaced
//     coordinates, 16 * sigmoid of it, gathered per token pair (computed once at load);
//   * q and v biases, none for k;
// and a 1x1 patch-embedding convolution before the body's norm and after each group's conv.
//
// Inputs are normalised as SwinIR's ((x - RGB mean) * img_range, 255 for the window-7 JPEG models
// as spandrel reads them) and are multiples of the window: framelift reflect-pads right and
// bottom, as upstream's check_image_size. The "pixelshuffle_aux" (compressed SR: a bicubic of the
// unpadded size on the side) and "pixelshuffle_hf" (three outputs) reconstructions, absolute
// position embeddings (fixed to the training crop) and patches over one pixel are refused by name.
//
// State dict (mv-lab/swin2sr, the layout chaiNNer-org/spandrel reads): conv_first,
// patch_embed.{proj, norm}, layers.I.residual_group.blocks.J.{norm1, attn.{qkv.weight, q_bias,
// v_bias, logit_scale, cpb_mlp.{0,2}, proj, relative_coords_table, relative_position_index}, norm2,
// mlp.{fc1, fc2}, attn_mask}, layers.I.conv (or .conv.{0,2,4}), layers.I.patch_embed.proj, norm,
// conv_after_body, then the reconstruction's convs.
#include <ATen/ATen.h>

#include <cmath>

#include "infer/layout_ops.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/swin_layout.h"
#include "models/swin_reconstruction.h"
#include "models/swin_shell.h"
#include "models/swin_windows.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kCpbHidden = 512;  // upstream's fixed width of the position-bias MLP

// SwinIR's shape and Swin2SR's flag.
struct Shape : SwinShape {
  bool qkv_bias = true;
};

Shape shape_of(const DetectedArch& d) {
  Shape s = swin_shape_as<Shape>(d);
  s.qkv_bias = d.params.get("qkv_bias", 1) != 0;
  return s;
}

// [(2 ws - 1)^2, 2]: each offset (dy, dx) scaled to [-8, 8] and log-spaced, sign(t) log2(|t| + 1)
// / 3, rows in relative_position_index's order. Upstream's relative_coords_table buffer.
at::Tensor log_spaced_offsets(int64_t ws) {
  const at::Tensor t = at::arange(-(ws - 1), ws, at::kDouble) * (8.0 / double(ws - 1));
  const at::Tensor v = (at::sign(t) * at::log2(t.abs() + 1.0) / 3.0).to(at::kFloat);
  const int64_t span = 2 * ws - 1;
  return at::stack({v.repeat_interleave(span), v.repeat({span})}, 1);
}

class SwinV2Layer {
 public:
  SwinV2Layer(WeightReader& r, const std::string& p, const Shape& s, bool shifted)
      : heads_(s.heads),
        window_(s.window),
        shift_(shifted ? s.window / 2 : 0),
        norm1_(read_layer_norm(r, p + ".norm1", s.embed)),
        proj_(read_linear(r, p + ".attn.proj", s.embed, s.embed)),
        norm2_(read_layer_norm(r, p + ".norm2", s.embed)),
        fc1_(read_linear(r, p + ".mlp.fc1", s.embed, s.hidden)),
        fc2_(read_linear(r, p + ".mlp.fc2", s.hidden, s.embed)) {
    const std::string a = p + ".attn";
    const int64_t c = s.embed, n = s.window * s.window, span = 2 * s.window - 1;
    qkv_.weight = r.tensor(a + ".qkv.weight", {3 * c, c});
    if (s.qkv_bias) qkv_.bias = at::cat({r.tensor(a + ".q_bias", {c}), at::zeros({c}), r.tensor(a + ".v_bias", {c})});
    // Upstream clamps before exp on every call; once here.
    scale_ = r.tensor(a + ".logit_scale", {s.heads, 1, 1}).clamp_max(std::log(100.0)).exp();
    const Linear cpb1 = read_linear(r, a + ".cpb_mlp.0", 2, kCpbHidden);
    const Linear cpb2{r.tensor(a + ".cpb_mlp.2.weight", {s.heads, kCpbHidden}), at::Tensor()};
    r.recomputed(a + ".relative_coords_table", {1, span, span, 2});
    r.recomputed(a + ".relative_position_index", {n, n});
    if (shifted && r.has(p + ".attn_mask")) r.recomputed(p + ".attn_mask", {-1, n, n});  // the training crop's
    const at::Tensor table = cpb2(at::relu(cpb1(log_spaced_offsets(s.window))));  // [span^2, heads]
    bias_ = 16 * at::sigmoid(gathered_bias(table, relative_position_index(s.window)));
  }

  // x: [B, H, W, C]; mask: the shift mask for H x W, which an unshifted layer leaves out.
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& mask) const {
    const at::Tensor m = shift_ ? mask : at::Tensor();
    const at::Tensor z = x + norm1_(in_windows(x, window_, shift_, [&](const at::Tensor& t) {
                           const std::vector<at::Tensor> qkv = qkv_(t).chunk(3, -1);
                           return proj_(cosine_attention(qkv[0], qkv[1], qkv[2], heads_, scale_, bias_, m));
                         }));
    return z + norm2_(fc2_(infer::gelu(fc1_(z))));
  }

  void visit_weights(const TensorVisitor& f) {
    for (LayerNorm* n : {&norm1_, &norm2_}) n->visit_weights(f);
    for (Linear* l : {&proj_, &fc1_, &fc2_}) l->visit_weights(f);
    f(qkv_.weight);
    if (qkv_.bias.defined()) f(qkv_.bias);
    f(scale_);
    f(bias_);
  }

 private:
  int64_t heads_, window_, shift_;
  LayerNorm norm1_;
  Linear qkv_, proj_;
  LayerNorm norm2_;
  Linear fc1_, fc2_;
  at::Tensor scale_;  // [heads, 1, 1]
  at::Tensor bias_;   // [heads, n, n]
};

// A residual group: the layers, a conv and a 1x1 embedding in image layout, plus the input.
using Group = ResidualGroup<LayerStack<SwinV2Layer>>;

std::unique_ptr<ImageModel> build(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) {
  const Shape s = shape_of(d);
  SwinFrame f = swin_frame(s);
  f.embed_conv = true;
  WeightReader r(dict, source);
  return std::make_unique<SwinShell<Group>>(r, d, std::move(f), [&](WeightReader& r, int64_t i) {
    Group g = read_swin_group<SwinV2Layer>(r, i, s);
    g.embed = read_conv(r, str("layers.", i, ".patch_embed.proj"), s.embed, s.embed, 1);
    return g;
  });
}

// What this builder does not run, by name; empty when it runs the file.
std::string unsupported(const weights::StateDict& dict) {
  if (dict.count("conv_bicubic.weight"))
    return "the pixelshuffle_aux reconstruction (compressed SR) is not supported: it adds a bicubic resize of the unpadded "
           "input, which padded inputs and tiles do not reproduce";
  if (dict.count("conv_after_body_hf.weight")) return "the pixelshuffle_hf reconstruction (three outputs) is not supported";
  if (dict.count("absolute_pos_embed")) return "absolute position embeddings (fixed to the training crop) are not supported";
  if (dim_of(dict, "patch_embed.proj.weight", 4, 2) != 1) return "patches over one pixel are not supported";
  return "";
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  const std::string block = "layers.0.residual_group.blocks.0.";
  if (!has_keys(dict, {block + "norm1.weight", block + "mlp.fc1.bias", block + "attn.relative_position_index",
                       block + "attn.logit_scale", "conv_first.weight", "patch_embed.proj.weight"})) return std::nullopt;
  const SwinLayoutChecks checks(dict, source, "Swin2SR");
  if (const std::string why = unsupported(dict); !why.empty()) throw checks.fail(why);

  const SwinShape s = read_swin_body(dict, source, "Swin2SR", "swin2sr", "conv_first.weight", [&](int64_t i) {
    return dim_of(dict, str("layers.", i, ".residual_group.blocks.0.attn.logit_scale"), 3, 0);
  });
  const int64_t out = dim_of(dict, "conv_last.weight", 4, 0).value_or(s.in);

  DetectedArch d;
  d.arch = "swin2sr";
  d.scale = int(swin_reconstruction_scale(dict, s.upsampler, out, source, "Swin2SR"));
  d.in_channels = int(s.in);
  d.out_channels = int(out);
  d.params = swin_params(s);
  d.params["qkv_bias"] = dict.count(block + "attn.q_bias") ? 1.0 : 0.0;
  d.params["patch_norm"] = dict.count("patch_embed.norm.weight") ? 1.0 : 0.0;
  return d;
}

}  // namespace

Architecture swin2sr_architecture() {
  return {"swin2sr", detect, build};
}

}  // namespace framelift::models
