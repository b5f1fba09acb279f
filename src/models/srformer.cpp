// SRFormer (Zhou et al. ICCV 2023, "SRFormer: Permuted Self-Attention for Single Image
// Super-Resolution"): SwinIR's frame (a 3x3 conv, residual groups of blocks on windows shifted by
// half a window every second block, a conv per group plus its input, a LayerNorm, a conv plus the
// first conv's features, SwinIR's four reconstructions: swin_reconstruction.h) whose blocks are:
//   x + PSA(LayerNorm(x))     permuted self-attention in ws x ws windows: queries are the ws^2
//                             tokens (q: C -> C); keys and values are compressed to C/4 channels
//                             each (kv: C -> C/2) and every 2 x 2 pixel block's four are stacked
//                             into one token of C channels, so ws^2 queries attend to (ws/2)^2
//                             keys with a bias per head from a (ws - 1)^2-row table
//                             (srformer_windows.h); then a projection
//   x + ConvFFN(LayerNorm(x)) fc1, exact GELU, h + GELU(depthwise 5x5(h)), fc2
//
// Inputs are normalised as x - RGB mean (img_range 1 in every published model) and must be
// multiples of the window: framelift's callers reflect-pad on the right and bottom, as upstream's
// check_image_size does. The shift mask depends on the input size; it is built once per size (the
// stored attn_mask is for the training crop only).
//
// State dict (HVision-NKU/SRFormer's basicsr/archs/srformer_arch.py): conv_first,
// patch_embed.norm, layers.I.residual_group.blocks.J.{norm1, attn.{q, kv, proj,
// relative_position_bias_table, aligned_relative_position_index}, norm2, mlp.{fc1,
// dwconv.depthwise_conv.0, fc2}, attn_mask}, layers.I.conv (or .conv.{0,2,4} for "3conv"), norm,
// conv_after_body (or .{0,2,4}), then the reconstruction's convs.
#include <ATen/ATen.h>

#include <cmath>
#include <optional>

#include "arch/declaration.h"
#include "infer/layout_ops.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/srformer_windows.h"
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

class PsaBlock {
 public:
  PsaBlock(WeightReader& r, const std::string& p, const SwinShape& s, bool shifted)
      : heads_(s.heads),
        window_(s.window),
        shift_(shifted ? s.window / 2 : 0),
        norm1_(read_layer_norm(r, p + ".norm1", s.embed)),
        q_(read_linear(r, p + ".attn.q", s.embed, s.embed)),
        kv_(read_linear(r, p + ".attn.kv", s.embed, s.embed / 2)),
        proj_(read_linear(r, p + ".attn.proj", s.embed, s.embed)),
        norm2_(read_layer_norm(r, p + ".norm2", s.embed)),
        fc1_(read_linear(r, p + ".mlp.fc1", s.embed, s.hidden)),
        dwconv_(read_conv(r, p + ".mlp.dwconv.depthwise_conv.0", 1, s.hidden, 5)),
        fc2_(read_linear(r, p + ".mlp.fc2", s.hidden, s.embed)) {
    const int64_t half = s.window / 2, n = s.window * s.window, keys = half * half;
    const at::Tensor table = r.tensor(p + ".attn.relative_position_bias_table", {(2 * half - 1) * (2 * half - 1), s.heads});
    r.recomputed(p + ".attn.aligned_relative_position_index", {n, keys});  // a pure function of the window
    if (shifted && r.has(p + ".attn_mask")) r.recomputed(p + ".attn_mask", {-1, n, keys});  // the training crop's
    bias_ = gathered_bias(table, permuted_window_index(s.window));  // [heads, n, keys], once
  }

  // x: [B, H, W, C]; mask: the permuted shift mask for H x W, which an unshifted block leaves out.
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& mask) const {
    const at::Tensor m = shift_ ? mask : at::Tensor();
    const at::Tensor z = x + in_windows(norm1_(x), window_, shift_, [&](const at::Tensor& t) { return attention(t, m); });
    const at::Tensor h = infer::gelu(fc1_(norm2_(z)));
    const at::Tensor local = infer::gelu(depthwise(dwconv_, h.permute({0, 3, 1, 2}))).permute({0, 2, 3, 1});
    return z + fc2_(h + local);
  }

  void visit_weights(const TensorVisitor& f) {
    for (LayerNorm* n : {&norm1_, &norm2_}) n->visit_weights(f);
    for (Linear* l : {&q_, &kv_, &proj_, &fc1_, &fc2_}) l->visit_weights(f);
    visit(dwconv_, f);
    f(bias_);
  }

 private:
  // windows: [B * nW, ws^2, C] -> the same. kv's C/2 channels are k's C/4 then v's C/4; a key (or
  // value) token of the permuted grid is its 2 x 2 block's four C/4 slices in row-major order.
  at::Tensor attention(const at::Tensor& windows, const at::Tensor& mask) const {
    const int64_t b = windows.size(0), c = windows.size(2), half = window_ / 2;
    const at::Tensor kv = kv_(windows)
                              .reshape({b, half, 2, half, 2, 2, c / 4})
                              .permute({0, 1, 3, 5, 2, 4, 6})
                              .reshape({b, half * half, 2, c});
    const at::Tensor k = kv.select(2, 0), v = kv.select(2, 1);
    return proj_(biased_attention(q_(windows), k, v, heads_, bias_, mask));
  }

  int64_t heads_, window_, shift_;
  LayerNorm norm1_;
  Linear q_, kv_, proj_;
  LayerNorm norm2_;
  Linear fc1_;
  Conv2d dwconv_;
  Linear fc2_;
  at::Tensor bias_;
};

// A permuted self-attention group: the blocks, then a conv in image layout, plus the input.
using PsaGroup = ResidualGroup<LayerStack<PsaBlock>>;

std::unique_ptr<ImageModel> build(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) {
  const SwinShape s = swin_shape_of(d);
  SwinFrame f = swin_frame(s);
  f.masks.emplace([ws = s.window](int64_t h, int64_t w) { return permuted_shift_mask(h, w, ws, ws / 2); });
  WeightReader r(dict, source);
  return std::make_unique<SwinShell<PsaGroup>>(r, d, std::move(f),
                                                [&](WeightReader& r, int64_t i) { return read_swin_group<PsaBlock>(r, i, s); });
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  const std::string block = "layers.0.residual_group.blocks.0.";
  if (!has_keys(dict, {"conv_first.weight", block + "norm1.weight", block + "mlp.fc1.bias",
                       block + "attn.aligned_relative_position_index",
                       block + "attn.relative_position_bias_table"})) return std::nullopt;
  const SwinLayoutChecks checks(dict, source, "SRFormer");
  // An absolute position embedding (ape) is one table for the training crop's tokens: it fixes the
  // input size, which tiles and whole frames of other sizes do not have. No published model has it.
  if (dict.count("absolute_pos_embed")) throw checks.fail("an absolute position embedding (absolute_pos_embed, ape) is not supported");

  // The window from the permuted index: [ws^2, (ws/2)^2].
  const int64_t queries = checks.dim(block + "attn.aligned_relative_position_index", 2, 0);
  const int64_t keys = checks.dim(block + "attn.aligned_relative_position_index", 2, 1);
  const int64_t half = std::llround(std::sqrt(double(keys)));
  if (half < 1 || half * half != keys || 4 * keys != queries)
    throw checks.fail(str("aligned_relative_position_index is ", queries, " x ", keys, ", not a window's ws^2 x (ws/2)^2"));

  const int64_t embed = checks.dim("conv_first.weight", 4, 0), in = checks.dim("conv_first.weight", 4, 1);
  auto heads_of = [&](int64_t i) {
    return checks.dim(str("layers.", i, ".residual_group.blocks.0.attn.relative_position_bias_table"), 2, 1);
  };
  const int64_t heads = heads_of(0);
  // The declared constraints (src/arch/srformer.cpp) before anything divides by these.
  arch::check_shapes("srformer", {{"embed_dim", double(embed)}, {"heads", double(heads)}, {"in_channels", double(in)}}, source);
  if (embed % 4) throw checks.fail(str(embed, " channels do not split into four key/value quarters"));
  const int64_t layers = int64_t(key_indices(dict, "layers.").size());
  auto blocks_in = [&](int64_t i) { return int64_t(key_indices(dict, str("layers.", i, ".residual_group.blocks.")).size()); };
  const int64_t depth = blocks_in(0);
  checks.expect_uniform(layers, blocks_in, heads_of);

  SwinShape s;
  s.in = in;
  s.embed = embed;
  s.layers = layers;
  s.depth = depth;
  s.heads = heads;
  s.window = 2 * half;
  s.hidden = checks.dim(block + "mlp.fc1.bias", 1, 0);
  s.upsampler = swin_upsampler_of(dict);
  s.feat = swin_reconstruction_features(dict);
  s.three_conv = !dict.count("conv_after_body.weight");
  s.img_range = 1;  // upstream's default and every published option file's
  const int64_t out = dim_of(dict, "conv_last.weight", 4, 0).value_or(in);

  DetectedArch d;
  d.arch = "srformer";
  d.scale = int(swin_reconstruction_scale(dict, s.upsampler, out, source, "SRFormer"));
  d.in_channels = int(in);
  d.out_channels = int(out);
  d.params = swin_params(s);
  return d;
}

}  // namespace

Architecture srformer_architecture() {
  return {"srformer", detect, build};
}

}  // namespace framelift::models
