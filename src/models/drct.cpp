// DRCT (Hsu et al. 2024, "DRCT: Saving Image Super-resolution away from Information
// Bottleneck"): SwinIR's frame (a 3x3 conv, groups, a LayerNorm, conv_after_body plus the first
// conv's features, the classical pixel-shuffle reconstruction) whose groups are residual dense
// groups (RDG) instead of SwinIR's plain stacks. An RDG of C channels and growth gc runs five Swin
// layers, each on the concatenation of the group's input and every earlier layer's 1x1-fused
// output, so layer k (0..4) works at C + k gc channels:
//   x_k = LeakyReLU0.2(adjust_k(swin_k(cat(x, x_1 .. x_{k-1}))))  (gc channels), k = 1..4
//   x_5 = adjust_5(swin_5(cat(x, x_1 .. x_4)))                     (C channels, no activation)
//   out = x + 0.2 x_5
// Layers 2 and 4 attend in windows shifted by half a window. Since the widths are not multiples of
// the group's head count, upstream gives layer k heads - ((C + k gc) mod heads) heads; layers 4 and
// 5 have an MLP ratio of 1, the others the network's (2 in every published model). Each layer is
// SwinIR's: x + attention(LN(x)) in windows with a learned bias per head and relative offset, then
// x + MLP(LN(x)) with an exact GELU.
//
// Inputs are normalised as x - RGB mean (img_range 1: spandrel cannot read it and every published
// model has 1) and must be multiples of the window: the runner reflect-pads on the right and
// bottom, as DRCT's (HAT's) test code does. A layer shifts only if upstream built it shifted: with
// a training crop of one window upstream turns the shift off and stores no mask, so the presence of
// layers.0.swin2.attn_mask decides, as in spandrel. The shift mask is built per input size.
//
// State dict (ming053l/DRCT, chaiNNer-org/spandrel): conv_first, patch_embed.norm (optional),
// layers.I.swin{1..5}.{norm1, attn.{qkv, proj, relative_position_bias_table,
// relative_position_index}, norm2, mlp.{fc1, fc2}, attn_mask (swin2, swin4)}, layers.I.adjust{1..5},
// norm, conv_after_body (absent: "identity"), conv_before_upsample.0, upsample.{0,2,..},
// conv_last.
#include <ATen/ATen.h>

#include <cmath>
#include <optional>

#include "arch/declaration.h"
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

constexpr int kDenseLayers = 5;
constexpr double kDenseScale = 0.2;  // the RDG's residual scale, fixed upstream

// The lineage's sizes (no depth: a group has five dense layers) and DRCT's own.
struct DrctShape : SwinShape {
  int64_t growth = 32;
  bool shifted = true;

  int64_t width(int k) const { return embed + k * growth; }  // channels of dense layer k (0-based)
  // Upstream's head count for a width that need not be a multiple of `heads`.
  int64_t heads_of(int k) const { return heads - width(k) % heads; }
  // int(width * mlp_ratio) as upstream computes it, mlp_ratio = hidden / embed (spandrel's reading);
  // layers 4 and 5 have ratio 1.
  int64_t hidden_of(int k) const {
    return k >= 3 ? width(k) : int64_t(double(width(k)) * (double(hidden) / double(embed)));
  }
};

DrctShape shape_of(const DetectedArch& d) {
  const auto& p = d.params;
  DrctShape s = swin_shape_as<DrctShape>(d);
  s.upsampler = SwinUpsampler::PixelShuffle;  // DRCT's only reconstruction
  s.growth = int64_t(p.get("growth", 32));
  s.shifted = p.get("shifted", 1) != 0;
  return s;
}

// A residual dense group: the five layers and their 1x1 fusions ("adjust"), in token layout.
class Rdg {
 public:
  Rdg(WeightReader& r, const std::string& p, const DrctShape& s) {
    for (int k = 0; k < kDenseLayers; ++k) {
      const int64_t shift = s.shifted && k % 2 == 1 ? s.window / 2 : 0;
      layers_.emplace_back(r, str(p, ".swin", k + 1), SwinLayerSize{s.width(k), s.heads_of(k), s.hidden_of(k), s.window, shift});
      adjust_.push_back(read_conv(r, str(p, ".adjust", k + 1), s.width(k), k + 1 < kDenseLayers ? s.growth : s.embed, 1));
    }
  }

  at::Tensor operator()(const at::Tensor& x, const at::Tensor& mask) const {  // [B, H, W, C]
    std::vector<at::Tensor> dense{x};
    for (int k = 0; k < kDenseLayers; ++k) {
      const at::Tensor y = layers_[k](k ? at::cat(dense, -1) : x, mask);
      // A 1x1 conv is a linear map of each token's channels: applied in token layout, no permutes.
      const at::Tensor fused = at::linear(y, adjust_[k].weight.flatten(1), adjust_[k].bias);
      if (k + 1 == kDenseLayers) return x + fused * kDenseScale;
      dense.push_back(at::leaky_relu(fused, 0.2));
    }
    return x;  // not reached
  }

  void visit_weights(const TensorVisitor& f) {
    for (SwinLayer& l : layers_) l.visit_weights(f);
    for (Conv2d& c : adjust_) visit(c, f);
  }

 private:
  std::vector<SwinLayer> layers_;
  std::vector<Conv2d> adjust_;
};

std::unique_ptr<ImageModel> build(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) {
  const DrctShape s = shape_of(d);
  SwinFrame f = swin_frame(s);
  if (!s.shifted) f.masks.reset();
  WeightReader r(dict, source);
  return std::make_unique<SwinShell<Rdg>>(r, d, std::move(f), [&](WeightReader& r, int64_t i) { return Rdg(r, str("layers.", i), s); });
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  const std::string swin1 = "layers.0.swin1.";
  if (!has_keys(dict, {"conv_first.weight", swin1 + "attn.relative_position_bias_table", swin1 + "mlp.fc1.weight",
                       "layers.0.adjust1.weight", "layers.0.adjust5.weight", "norm.weight"})) return std::nullopt;
  const SwinLayoutChecks checks(dict, source, "DRCT");
  // Variants upstream has but no published model uses, refused by name rather than run wrongly.
  if (!dict.count("conv_last.weight"))
    throw checks.fail("no conv_last: a DRCT without the pixel-shuffle reconstruction (upsampler \"\") is not supported "
               "(upstream returns its input unchanged then)");
  if (dict.count("absolute_pos_embed"))
    throw checks.fail("absolute_pos_embed (ape): a position embedding fixed to the training size is not supported");

  DrctShape s;
  s.embed = checks.dim("conv_first.weight", 4, 0);
  s.in = checks.dim("conv_first.weight", 4, 1);
  const int64_t rows = checks.dim(swin1 + "attn.relative_position_bias_table", 2, 0);
  const int64_t span = std::llround(std::sqrt(double(rows)));
  s.window = (span + 1) / 2;
  if (span * span != rows || span % 2 == 0 || s.window < 2)
    throw checks.fail(str("a relative position table of ", rows, " rows is not (2 ws - 1)^2 for a window ws"));
  s.heads = checks.dim(swin1 + "attn.relative_position_bias_table", 2, 1);
  s.hidden = checks.dim(swin1 + "mlp.fc1.weight", 2, 0);
  s.growth = checks.dim("layers.0.adjust1.weight", 4, 0);
  s.layers = int64_t(key_indices(dict, "layers.").size());
  s.feat = checks.dim("conv_last.weight", 4, 1);
  s.shifted = dict.count("layers.0.swin2.attn_mask") != 0;
  s.after_body = dict.count("conv_after_body.weight") != 0;
  s.patch_norm = dict.count("patch_embed.norm.weight") != 0;
  // The declared constraints (src/arch/drct.cpp) before heads_of() takes a modulo by heads.
  arch::check_shapes("drct", {{"embed_dim", double(s.embed)}, {"heads", double(s.heads)}, {"growth", double(s.growth)},
                              {"in_channels", double(s.in)}},
                     source);
  if (const int64_t out = checks.dim("conv_last.weight", 4, 0); out != s.in)
    throw checks.fail(str("conv_last makes ", out, " channels from ", s.in));
  for (int k = 0; k < kDenseLayers; ++k)
    if (s.heads_of(k) <= 0 || s.width(k) % s.heads_of(k))
      throw checks.fail(str("dense layer ", k + 1, "'s ", s.width(k), " channels do not split into its ", s.heads_of(k), " heads"));
  for (int64_t i = 1; i < s.layers; ++i) {
    const auto h = dim_of(dict, str("layers.", i, ".swin1.attn.relative_position_bias_table"), 2, 1);
    if (h && *h != s.heads)
      throw checks.fail(str("layer ", i, " has ", *h, " heads where layer 0 has ", s.heads, "; only uniform layers are supported"));
  }
  const UpsamplerScale scale = pixel_shuffle_scale(dict, "upsample");
  if (!scale.error.empty()) throw checks.fail(scale.error);

  DetectedArch d;
  d.arch = "drct";
  d.scale = int(scale.scale);
  d.in_channels = int(s.in);
  d.out_channels = int(s.in);
  d.params = {{"embed_dim", double(s.embed)},
              {"layers", double(s.layers)},
              {"heads", double(s.heads)},
              {"window_size", double(s.window)},
              {"mlp_hidden", double(s.hidden)},
              {"growth", double(s.growth)},
              {"num_feat", double(s.feat)},
              {"shifted", s.shifted ? 1.0 : 0.0},
              {"conv_after_body", s.after_body ? 1.0 : 0.0},
              {"patch_norm", s.patch_norm ? 1.0 : 0.0}};
  return d;
}

}  // namespace

Architecture drct_architecture() {
  return {"drct", detect, build};
}

}  // namespace framelift::models
