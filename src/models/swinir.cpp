// SwinIR (Liang et al. 2021, "Image Restoration Using Swin Transformer"): a 3x3 conv, residual
// Swin transformer blocks (RSTB: `depth` Swin layers, every second one on windows shifted by half
// a window, then a conv, plus the group's input), a LayerNorm, a conv plus the first conv's
// features, and one of four reconstructions (pixelshuffle, pixelshuffledirect, nearest+conv, none:
// swin_reconstruction.h, shared with Swin2SR).
// A Swin layer: x + attention(LayerNorm(x)) in ws x ws windows with a learned bias per head and
// relative offset; then x + MLP(LayerNorm(x)) with an exact GELU.
//
// Inputs are normalised as (x - RGB mean) * img_range (1, or 255 for the window-7 JPEG models,
// as spandrel reads them), and must be multiples of the window: framelift's callers reflect-pad
// on the right and bottom, as upstream's check_image_size does. The shift mask depends on the
// input size; it is built once per size (the stored attn_mask is for the training crop only).
//
// State dict (upstream's layout, as in JingyunLiang/SwinIR and chaiNNer-org/spandrel):
// conv_first (or conv_first.1 after a pixel unshuffle), patch_embed.norm,
// layers.I.residual_group.blocks.J.{norm1, attn.{qkv, proj, relative_position_bias_table,
// relative_position_index}, norm2, mlp.{fc1, fc2}, attn_mask}, layers.I.conv (or .conv.{0,2,4}
// for "3conv"), norm, conv_after_body (or .{0,2,4}), then the reconstruction's convs.
#include <ATen/ATen.h>


#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/swin_layer.h"
#include "models/swin_layout.h"
#include "models/swin_reconstruction.h"
#include "models/swin_shell.h"
#include "models/swin_windows.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

// A residual Swin transformer block (RSTB): the layers, then a conv in image layout, plus the input.
using Rstb = ResidualGroup<LayerStack<SwinLayer>>;

std::unique_ptr<ImageModel> build(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) {
  const SwinShape s = swin_shape_of(d);
  WeightReader r(dict, source);
  return std::make_unique<SwinShell<Rstb>>(r, d, swin_frame(s), [&](WeightReader& r, int64_t i) { return read_swin_group<SwinLayer>(r, i, s); });
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  const std::string block = "layers.0.residual_group.blocks.0.";
  if (!has_keys(dict, {block + "norm1.weight", block + "mlp.fc1.bias", block + "attn.relative_position_index",
                       block + "attn.relative_position_bias_table", "patch_embed.norm.weight"})) return std::nullopt;
  if (!dict.count("conv_first.weight") && !dict.count("conv_first.1.weight")) return std::nullopt;
  // Swin2SR (SwinV2 attention: a logit scale and a position MLP) shares this layout's names.
  if (dict.count(block + "attn.logit_scale") || dict.count(block + "attn.cpb_mlp.0.weight")) return std::nullopt;
  const SwinLayoutChecks checks(dict, source, "SwinIR");

  const bool unshuffled = dict.count("conv_first.1.weight") != 0;
  SwinShape s = read_swin_body(dict, source, "SwinIR", "swinir", unshuffled ? "conv_first.1.weight" : "conv_first.weight", [&](int64_t i) {
    return dim_of(dict, str("layers.", i, ".residual_group.blocks.0.attn.relative_position_bias_table"), 2, 1);
  });
  // A pixel unshuffle before conv_first packs u x u pixels into the channels: in = 3 * u^2 (or 1 * u^2).
  if (unshuffled) {
    const int64_t packed = s.in;
    const std::optional<int> u3 = shuffle_factor(packed, 3), u1 = shuffle_factor(packed, 1);
    if (u3 && *u3 > 1) s.unshuffle = *u3, s.in = 3;
    else if (u1 && *u1 > 1) s.unshuffle = *u1, s.in = 1;
    else throw checks.fail(str("conv_first.1 takes ", packed, " channels, not 1 or 3 times a square unshuffle"));
  }
  const int64_t out = dim_of(dict, "conv_last.weight", 4, 0).value_or(s.in);
  const int64_t scale = swin_reconstruction_scale(dict, s.upsampler, out, source, "SwinIR");
  if (scale % s.unshuffle)
    throw checks.fail(str("a x", scale, " reconstruction after a x", s.unshuffle, " unshuffle is not a whole scale"));

  DetectedArch d;
  d.arch = "swinir";
  d.scale = int(scale / s.unshuffle);
  d.in_channels = int(s.in);
  d.out_channels = int(out);
  d.params = swin_params(s);
  d.params["unshuffle"] = double(s.unshuffle);
  return d;
}

}  // namespace

Architecture swinir_architecture() {
  return {"swinir", detect, build};
}

}  // namespace framelift::models
