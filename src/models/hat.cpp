// HAT (Chen et al. 2023, "Activating More Pixels in Image Super-Resolution Transformer"): SwinIR's
// frame (conv, residual groups, LayerNorm, conv, pixel-shuffle reconstruction) with two additions
// that let each output pixel draw on more input pixels:
//   HAB   a Swin layer whose attention branch is joined by a channel-attention conv block,
//         x + attn(LN(x)) + 0.01 * CAB(LN(x)), CAB = conv (C -> C/compress), GELU, conv back,
//         times a squeeze-excitation gate; then x + MLP(LN(x)).
//   OCAB  at the end of each group: queries from ws x ws windows attend to keys and values from
//         the overlapping (ws + ws/2)^2 window around each, zero-padded at the map's edges, with a
//         relative-position bias between the two window sizes; then an MLP.
// Inputs are reflect-padded to the window on the right and bottom, as upstream's check_image_size;
// the shift mask is built per input size (HAT stores none). The 0.01 conv scale is fixed upstream.
//
// State dict (XPixelGroup/HAT and chaiNNer-org/spandrel): conv_first, patch_embed.norm,
// relative_position_index_SA / _OCA, layers.I.residual_group.blocks.J.{norm1, attn.{qkv, proj,
// relative_position_bias_table}, conv_block.cab.{0, 2, 3.attention.{1, 3}}, norm2, mlp.{fc1,fc2}},
// layers.I.residual_group.overlap_attn.{norm1, qkv, proj, relative_position_bias_table, norm2,
// mlp}, layers.I.conv, norm, conv_after_body, conv_before_upsample.0, upsample.{0,2,..}, conv_last.
#include <ATen/ATen.h>

#include <cmath>
#include <optional>

#include "arch/declaration.h"
#include "infer/layout_ops.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/swin_convs.h"
#include "models/swin_layer.h"
#include "models/swin_layout.h"
#include "models/swin_shell.h"
#include "models/swin_windows.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr double kConvScale = 0.01;

// The lineage's sizes and HAT's own: the overlapping window and the conv block's channels.
struct HatShape : SwinShape {
  int64_t overlap = 24, compressed = 60, squeezed = 6;
};

HatShape shape_of(const DetectedArch& d) {
  const auto& p = d.params;
  HatShape s = swin_shape_as<HatShape>(d);
  s.upsampler = SwinUpsampler::PixelShuffle;  // HAT's only reconstruction
  s.overlap = int64_t(p.get("overlap_window", 24));
  s.compressed = int64_t(p.get("cab_channels", s.embed / 3));
  s.squeezed = int64_t(p.get("squeeze_channels", s.embed / 30));
  return s;
}

struct Mlp {
  Linear fc1, fc2;
  at::Tensor operator()(const at::Tensor& x) const { return fc2(infer::gelu(fc1(x))); }
};

// Channel attention block: conv down, GELU, conv up, times a squeeze-excitation gate.
struct Cab {
  Conv2d down, up, squeeze, excite;
  at::Tensor operator()(const at::Tensor& x) const {  // [B, C, H, W]
    const at::Tensor y = up(infer::gelu(down(x)));
    return y * at::sigmoid(excite(at::relu(squeeze(y.mean({2, 3}, true)))));
  }
};

// A hybrid attention block: a Swin layer whose attention is joined by the channel-attention conv
// block on the same normed map.
class Hab {
 public:
  Hab(WeightReader& r, const std::string& p, const HatShape& s, bool shifted)
      : swin_(r, p, SwinLayerSize{s.embed, s.heads, s.hidden, s.window, shifted ? s.window / 2 : 0, false}),
        cab_{read_conv(r, p + ".conv_block.cab.0", s.embed, s.compressed, 3), read_conv(r, p + ".conv_block.cab.2", s.compressed, s.embed, 3),
             read_conv(r, p + ".conv_block.cab.3.attention.1", s.embed, s.squeezed, 1, 1, 0),
             read_conv(r, p + ".conv_block.cab.3.attention.3", s.squeezed, s.embed, 1, 1, 0)} {}

  // x: [B, H, W, C]; mask: the shift mask for H x W.
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& mask) const {
    const at::Tensor normed = swin_.norm1(x);
    const at::Tensor conv = cab_(normed.permute({0, 3, 1, 2})).permute({0, 2, 3, 1});
    return swin_.feed_forward(x + swin_.attention(normed, mask) + conv * kConvScale);
  }

  void visit_weights(const TensorVisitor& f) {
    swin_.visit_weights(f);
    for (Conv2d* c : {&cab_.down, &cab_.up, &cab_.squeeze, &cab_.excite}) visit(*c, f);
  }

 private:
  SwinLayer swin_;
  Cab cab_;
};

// Overlapping cross-attention: queries in ws x ws windows, keys and values in the ows x ows window
// centred on each (zero outside the map).
class Ocab {
 public:
  Ocab(WeightReader& r, const std::string& p, const HatShape& s, const at::Tensor& index)
      : heads_(s.heads),
        window_(s.window),
        overlap_(s.overlap),
        norm1_(read_layer_norm(r, p + ".norm1", s.embed)),
        qkv_(read_linear(r, p + ".qkv", s.embed, 3 * s.embed)),
        proj_(read_linear(r, p + ".proj", s.embed, s.embed)),
        norm2_(read_layer_norm(r, p + ".norm2", s.embed)),
        mlp_{read_linear(r, p + ".mlp.fc1", s.embed, s.hidden), read_linear(r, p + ".mlp.fc2", s.hidden, s.embed)} {
    const int64_t span = s.window + s.overlap - 1;
    bias_ = gathered_bias(r.tensor(p + ".relative_position_bias_table", {span * span, s.heads}), index);
  }

  at::Tensor operator()(const at::Tensor& x) const {  // [B, H, W, C]
    const int64_t b = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
    const std::vector<at::Tensor> qkv = qkv_(norm1_(x)).chunk(3, -1);
    const at::Tensor q = window_partition(qkv[0], window_);
    // Keys and values of every overlapping window: im2col of the [B, 2C, H, W] map gives
    // [B, 2C * ows^2, nW], channel-major as nn.Unfold, then tokens [2, B * nW, ows^2, C].
    const at::Tensor kv = at::cat({qkv[1], qkv[2]}, -1).permute({0, 3, 1, 2});
    const int64_t pad = (overlap_ - window_) / 2;
    const at::Tensor cols = at::im2col(kv, {overlap_, overlap_}, {1, 1}, {pad, pad}, {window_, window_});
    const at::Tensor kvw = cols.view({b, 2, c, overlap_ * overlap_, -1}).permute({1, 0, 4, 3, 2}).reshape({2, -1, overlap_ * overlap_, c});
    const at::Tensor attended = biased_attention(q, kvw[0], kvw[1], heads_, bias_, at::Tensor());
    const at::Tensor y = proj_(window_merge(attended, b, h, w, window_)) + x;
    return y + mlp_(norm2_(y));
  }

  void visit_weights(const TensorVisitor& f) {
    for (LayerNorm* n : {&norm1_, &norm2_}) n->visit_weights(f);
    for (Linear* l : {&qkv_, &proj_, &mlp_.fc1, &mlp_.fc2}) l->visit_weights(f);
    f(bias_);
  }

 private:
  int64_t heads_, window_, overlap_;
  LayerNorm norm1_;
  Linear qkv_, proj_;
  LayerNorm norm2_;
  Mlp mlp_;
  at::Tensor bias_;
};

// What a residual hybrid attention group runs in token layout: the HABs, then the OCAB.
struct AttentionBlocks {
  LayerStack<Hab> habs;
  std::optional<Ocab> overlap;

  at::Tensor operator()(const at::Tensor& x, const at::Tensor& mask) { return (*overlap)(habs(x, mask)); }
  void visit_weights(const TensorVisitor& f) {
    habs.visit_weights(f);
    overlap->visit_weights(f);
  }
};

// A residual hybrid attention group (RHAG): those blocks, a conv in image layout, plus the input.
using Rhag = ResidualGroup<AttentionBlocks>;

std::unique_ptr<ImageModel> build(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) {
  const HatShape s = shape_of(d);
  WeightReader r(dict, source);
  const int64_t n = s.window * s.window, on = s.overlap * s.overlap;
  r.recomputed("relative_position_index_SA", {n, n});  // pure functions of the window sizes
  r.recomputed("relative_position_index_OCA", {n, on});
  // Upstream's index runs negative for many pairs and PyTorch's indexing wraps those to the table's
  // end; the trained tables depend on it, so the wrap is kept.
  const int64_t rows = (s.window + s.overlap - 1) * (s.window + s.overlap - 1);
  const at::Tensor oca_index = at::remainder(overlapping_window_index(s.window, s.overlap), rows);
  return std::make_unique<SwinShell<Rhag>>(r, d, swin_frame(s), [&](WeightReader& r, int64_t i) {
    const std::string p = str("layers.", i);
    Rhag g;
    for (int64_t j = 0; j < s.depth; ++j) g.blocks.habs.layers.emplace_back(r, str(p, ".residual_group.blocks.", j), s, j % 2 == 1);
    g.blocks.overlap.emplace(r, p + ".residual_group.overlap_attn", s, oca_index);
    g.conv = read_group_conv(r, i, s);  // 1conv: HAT has no other
    return g;
  });
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  const std::string group = "layers.0.residual_group.", block = group + "blocks.0.";
  if (!has_keys(dict, {"relative_position_index_SA", "relative_position_index_OCA", "conv_first.weight",
                       block + "conv_block.cab.0.weight", group + "overlap_attn.relative_position_bias_table",
                       "conv_last.weight"})) return std::nullopt;
  const SwinLayoutChecks checks(dict, source, "HAT");
  const int64_t embed = checks.dim("conv_first.weight", 4, 0), in = checks.dim("conv_first.weight", 4, 1);
  const int64_t n = checks.dim("relative_position_index_SA", 2, 0), on = checks.dim("relative_position_index_OCA", 2, 1);
  const int64_t window = std::llround(std::sqrt(double(n))), overlap = std::llround(std::sqrt(double(on)));
  if (window * window != n || overlap * overlap != on || overlap < window || (overlap - window) % 2)
    throw checks.fail(str("window tables of ", n, " and ", on, " tokens are not a window and a wider centred one"));
  const int64_t heads = checks.dim(group + "overlap_attn.relative_position_bias_table", 2, 1);
  // The declared constraints (src/arch/hat.cpp) before anything divides by these.
  arch::check_shapes("hat", {{"embed_dim", double(embed)}, {"heads", double(heads)}, {"in_channels", double(in)}}, source);
  const int64_t layers = int64_t(key_indices(dict, "layers.").size());
  const int64_t depth = int64_t(key_indices(dict, group + "blocks.").size());
  checks.expect_uniform(
      layers, [&](int64_t i) { return int64_t(key_indices(dict, str("layers.", i, ".residual_group.blocks.")).size()); },
      [&](int64_t i) { return dim_of(dict, str("layers.", i, ".residual_group.overlap_attn.relative_position_bias_table"), 2, 1); });
  const int64_t feat = checks.dim("conv_last.weight", 4, 1);
  const UpsamplerScale scale = pixel_shuffle_scale(dict, "upsample");
  if (!scale.error.empty()) throw checks.fail(scale.error);
  DetectedArch d;
  d.arch = "hat";
  d.scale = int(scale.scale);
  d.in_channels = int(in);
  d.out_channels = int(in);
  d.params = {{"embed_dim", double(embed)},
              {"layers", double(layers)},
              {"depth", double(depth)},
              {"heads", double(heads)},
              {"window_size", double(window)},
              {"overlap_window", double(overlap)},
              {"mlp_hidden", double(checks.dim(block + "mlp.fc1.weight", 2, 0))},
              {"cab_channels", double(checks.dim(block + "conv_block.cab.0.weight", 4, 0))},
              {"squeeze_channels", double(checks.dim(block + "conv_block.cab.3.attention.1.weight", 4, 0))},
              {"num_feat", double(feat)},
              {"conv_after_body", dict.count("conv_after_body.weight") ? 1.0 : 0.0}};
  return d;
}

}  // namespace

Architecture hat_architecture() {
  return {"hat", detect, build};
}

}  // namespace framelift::models
