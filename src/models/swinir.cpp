// SwinIR (Liang et al. 2021, "Image Restoration Using Swin Transformer"): a 3x3 conv, residual
// Swin transformer blocks (RSTB: `depth` Swin layers, every second one on windows shifted by half
// a window, then a conv, plus the group's input), a LayerNorm, a conv plus the first conv's
// features, and one of four reconstructions:
//   pixelshuffle        classical SR: conv + LeakyReLU(0.01) to num_feat, (conv, shuffle 2)^n or
//                       (conv, shuffle 3), conv
//   pixelshuffledirect  lightweight SR: one conv to out * scale^2 and a shuffle
//   nearest+conv        real-world SR: conv + LeakyReLU(0.01), then per x2 a nearest resize, conv
//                       and LeakyReLU(0.2), conv + LeakyReLU(0.2), conv
//   none                denoising and JPEG (scale 1): the input plus a conv of the features
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

#include <cmath>
#include <map>

#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/swin_convs.h"
#include "models/swin_windows.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

enum class Upsampler { None = 0, PixelShuffle = 1, PixelShuffleDirect = 2, NearestConv = 3 };

struct SwinShape {
  int64_t in = 3, out = 3, embed = 96, layers = 4, depth = 6, heads = 6, window = 8, hidden = 192, feat = 64;
  int64_t scale = 1, unshuffle = 1;  // scale: of the reconstruction, before the unshuffle divides it
  Upsampler upsampler = Upsampler::None;
  bool three_conv = false;
  double img_range = 1;
};

SwinShape shape_of(const DetectedArch& d) {
  const auto& p = d.params;
  SwinShape s;
  s.in = d.in_channels;
  s.out = d.out_channels;
  s.embed = int64_t(p.get("embed_dim", 96));
  s.layers = int64_t(p.get("layers", 4));
  s.depth = int64_t(p.get("depth", 6));
  s.heads = int64_t(p.get("heads", 6));
  s.window = int64_t(p.get("window_size", 8));
  s.hidden = int64_t(p.get("mlp_hidden", 2.0 * s.embed));
  s.feat = int64_t(p.get("num_feat", 64));
  s.unshuffle = int64_t(p.get("unshuffle", 1));
  s.scale = d.scale * s.unshuffle;
  s.upsampler = Upsampler(int(p.get("upsampler", 0)));
  s.three_conv = p.get("three_conv", 0) != 0;
  s.img_range = p.get("img_range", 1);
  return s;
}

class SwinLayer {
 public:
  SwinLayer(WeightReader& r, const std::string& p, const SwinShape& s, bool shifted)
      : heads_(s.heads),
        window_(s.window),
        shift_(shifted ? s.window / 2 : 0),
        norm1_(read_layer_norm(r, p + ".norm1", s.embed)),
        qkv_(read_linear(r, p + ".attn.qkv", s.embed, 3 * s.embed)),
        proj_(read_linear(r, p + ".attn.proj", s.embed, s.embed)),
        norm2_(read_layer_norm(r, p + ".norm2", s.embed)),
        fc1_(read_linear(r, p + ".mlp.fc1", s.embed, s.hidden)),
        fc2_(read_linear(r, p + ".mlp.fc2", s.hidden, s.embed)) {
    const int64_t n = s.window * s.window, span = 2 * s.window - 1;
    const at::Tensor table = r.tensor(p + ".attn.relative_position_bias_table", {span * span, s.heads});
    r.recomputed(p + ".attn.relative_position_index", {n, n});  // a pure function of the window
    if (shifted && r.has(p + ".attn_mask")) r.recomputed(p + ".attn_mask", {-1, n, n});  // the training crop's
    // [heads, n, n]: each token pair's bias, gathered once instead of on every call.
    bias_ = gathered_bias(table, relative_position_index(s.window));
  }

  // x: [B, H, W, C]; mask: the shift mask for H x W (undefined for an unshifted layer).
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& mask) const {
    const int64_t b = x.size(0), h = x.size(1), w = x.size(2);
    at::Tensor y = norm1_(x);
    if (shift_) y = at::roll(y, {-shift_, -shift_}, {1, 2});
    y = window_merge(attention(window_partition(y, window_), mask), b, h, w, window_);
    if (shift_) y = at::roll(y, {shift_, shift_}, {1, 2});
    const at::Tensor z = x + y;
    return z + fc2_(at::gelu(fc1_(norm2_(z))));
  }

  bool shifted() const { return shift_ != 0; }

  void visit_weights(const TensorVisitor& f) {
    for (LayerNorm* n : {&norm1_, &norm2_}) n->visit_weights(f);
    for (Linear* l : {&qkv_, &proj_, &fc1_, &fc2_}) l->visit_weights(f);
    f(bias_);
  }

 private:
  // windows: [B * nW, n, C] -> the same, attended within each window.
  at::Tensor attention(const at::Tensor& windows, const at::Tensor& mask) const {
    const std::vector<at::Tensor> qkv = qkv_(windows).chunk(3, -1);
    return proj_(biased_attention(qkv[0], qkv[1], qkv[2], heads_, bias_, mask));
  }

  int64_t heads_, window_, shift_;
  LayerNorm norm1_;
  Linear qkv_, proj_;
  LayerNorm norm2_;
  Linear fc1_, fc2_;
  at::Tensor bias_;
};

// A residual Swin transformer block: the layers, then a conv in image layout, plus the input.
struct Rstb {
  std::vector<SwinLayer> layers;
  ResidualConv conv;
};

class SwinIR : public NativeModel {
 public:
  SwinIR(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), s_(shape_of(d)) {
    WeightReader r(dict, source);
    const int64_t in = s_.in * s_.unshuffle * s_.unshuffle;
    first_ = read_conv(r, s_.unshuffle > 1 ? "conv_first.1" : "conv_first", in, s_.embed, 3);
    embed_norm_ = read_layer_norm(r, "patch_embed.norm", s_.embed);
    for (int64_t i = 0; i < s_.layers; ++i) {
      const std::string p = str("layers.", i);
      Rstb g;
      for (int64_t j = 0; j < s_.depth; ++j) g.layers.emplace_back(r, str(p, ".residual_group.blocks.", j), s_, j % 2 == 1);
      g.conv = read_residual_conv(r, p + ".conv", s_.embed, s_.three_conv);
      groups_.push_back(std::move(g));
    }
    norm_ = read_layer_norm(r, "norm", s_.embed);
    after_body_ = read_residual_conv(r, "conv_after_body", s_.embed, s_.three_conv);
    read_reconstruction(r);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const at::Tensor mean = div2k_mean(input, s_.in);
    at::Tensor x = (input - mean) * s_.img_range;
    if (s_.unshuffle > 1) x = at::pixel_unshuffle(x, s_.unshuffle);
    const at::Tensor first = first_(x);
    const at::Tensor body = after_body_(features(first)) + first;
    at::Tensor y;
    switch (s_.upsampler) {
      case Upsampler::PixelShuffle: y = last_(shuffle_upsample_(at::leaky_relu(before_upsample_(body), 0.01))); break;
      case Upsampler::PixelShuffleDirect: y = at::pixel_shuffle(upsample_[0](body), s_.scale); break;
      case Upsampler::NearestConv: {
        y = at::leaky_relu(before_upsample_(body), 0.01);
        for (const Conv2d& up : upsample_) y = at::leaky_relu(up(upsample_nearest(y, 2)), 0.2);
        y = last_(at::leaky_relu(hr_(y), 0.2));
        break;
      }
      case Upsampler::None: y = x + last_(body); break;
    }
    return y / s_.img_range + mean;
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(first_, f);
    embed_norm_.visit_weights(f);
    for (Rstb& g : groups_) {
      for (SwinLayer& l : g.layers) l.visit_weights(f);
      g.conv.visit_weights(f);
    }
    norm_.visit_weights(f);
    after_body_.visit_weights(f);
    shuffle_upsample_.visit_weights(f);
    for (Conv2d* c : {&before_upsample_, &hr_, &last_})
      if (c->weight.defined()) visit(*c, f);
    for (Conv2d& c : upsample_) visit(c, f);
    masks_.clear();  // rebuilt in the new device and precision
  }

 private:
  // The transformer body in token layout [B, H, W, C], back to [B, C, H, W].
  at::Tensor features(const at::Tensor& x) {
    at::Tensor t = embed_norm_(x.permute({0, 2, 3, 1}));
    const at::Tensor& mask = masks_.for_map(t);
    for (const Rstb& g : groups_) {
      at::Tensor y = t;
      for (const SwinLayer& l : g.layers) y = l(y, l.shifted() ? mask : at::Tensor());
      t = g.conv(y.permute({0, 3, 1, 2})).permute({0, 2, 3, 1}) + t;
    }
    return norm_(t).permute({0, 3, 1, 2}).contiguous();
  }

  void read_reconstruction(WeightReader& r) {
    const int64_t e = s_.embed, f = s_.feat;
    switch (s_.upsampler) {
      case Upsampler::PixelShuffle:
        before_upsample_ = read_conv(r, "conv_before_upsample.0", e, f, 3);
        shuffle_upsample_ = read_pixel_shuffle_upsampler(r, "upsample", f, s_.scale);
        last_ = read_conv(r, "conv_last", f, s_.out, 3);
        break;
      case Upsampler::PixelShuffleDirect:
        upsample_.push_back(read_conv(r, "upsample.0", e, s_.out * s_.scale * s_.scale, 3));
        break;
      case Upsampler::NearestConv: {
        before_upsample_ = read_conv(r, "conv_before_upsample.0", e, f, 3);
        for (int i = 1; (1 << i) <= s_.scale; ++i) upsample_.push_back(read_conv(r, str("conv_up", i), f, f, 3));
        hr_ = read_conv(r, "conv_hr", f, f, 3);
        last_ = read_conv(r, "conv_last", f, s_.out, 3);
        break;
      }
      case Upsampler::None: last_ = read_conv(r, "conv_last", e, s_.out, 3); break;
    }
  }

  SwinShape s_;
  Conv2d first_;
  LayerNorm embed_norm_, norm_;
  std::vector<Rstb> groups_;
  ResidualConv after_body_;
  Conv2d before_upsample_, hr_, last_;
  PixelShuffleUpsampler shuffle_upsample_;
  std::vector<Conv2d> upsample_;  // the direct and nearest+conv upsamplers' convs
  ShiftMasks masks_{s_.window, s_.window / 2};
};

// Blocks of layer I: the count of "layers.I.residual_group.blocks.J." indices.
int64_t blocks_in(const weights::StateDict& dict, int64_t layer) {
  return int64_t(key_indices(dict, str("layers.", layer, ".residual_group.blocks.")).size());
}

Upsampler upsampler_of(const weights::StateDict& dict) {
  if (dict.count("conv_before_upsample.0.weight")) return dict.count("conv_up1.weight") ? Upsampler::NearestConv : Upsampler::PixelShuffle;
  return dict.count("upsample.0.weight") ? Upsampler::PixelShuffleDirect : Upsampler::None;
}

// The reconstruction's scale, from its convolutions' shapes.
int64_t reconstruction_scale(const weights::StateDict& dict, Upsampler u, int64_t out, const std::string& source) {
  auto fail = [&](const std::string& why) -> int64_t { throw Error(ErrorKind::Model, str(source, ": SwinIR layout: ", why)); };
  switch (u) {
    case Upsampler::NearestConv: {
      int64_t scale = 1;
      for (int i = 1; dict.count(str("conv_up", i, ".weight")); ++i) scale *= 2;
      return scale;
    }
    case Upsampler::PixelShuffle: {
      const UpsamplerScale s = pixel_shuffle_scale(dict, "upsample");
      return s.error.empty() ? s.scale : fail(s.error);
    }
    case Upsampler::PixelShuffleDirect: {
      const auto o = dim_of(dict, "upsample.0.weight", 4, 0);
      const std::optional<int> scale = o ? shuffle_factor(*o, out) : std::nullopt;
      return scale ? *scale : fail("upsample.0 does not make output channels times a square scale");
    }
    case Upsampler::None: return 1;
  }
  return 1;
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  const std::string block = "layers.0.residual_group.blocks.0.";
  for (const std::string key : {block + "norm1.weight", block + "mlp.fc1.bias", block + "attn.relative_position_index",
                                block + "attn.relative_position_bias_table", std::string("patch_embed.norm.weight")})
    if (!dict.count(key)) return std::nullopt;
  if (!dict.count("conv_first.weight") && !dict.count("conv_first.1.weight")) return std::nullopt;
  // Swin2SR (SwinV2 attention: a logit scale and a position MLP) shares this layout's names.
  if (dict.count(block + "attn.logit_scale") || dict.count(block + "attn.cpb_mlp.0.weight")) return std::nullopt;
  auto fail = [&](const std::string& why) { return Error(ErrorKind::Model, str(source, ": SwinIR layout: ", why)); };

  const bool unshuffled = dict.count("conv_first.1.weight") != 0;
  const std::string first = unshuffled ? "conv_first.1.weight" : "conv_first.weight";
  const auto embed = dim_of(dict, first, 4, 0), in = dim_of(dict, first, 4, 1);
  const auto hidden = dim_of(dict, block + "mlp.fc1.bias", 1, 0);
  const auto index = dim_of(dict, block + "attn.relative_position_index", 2, 0);
  const auto heads = dim_of(dict, block + "attn.relative_position_bias_table", 2, 1);
  if (!embed || !in || !hidden || !index || !heads) throw fail("conv_first, mlp.fc1 or the attention's tables have unexpected ranks");
  const int64_t window = std::llround(std::sqrt(double(*index)));
  if (window * window != *index) throw fail(str("relative_position_index has ", *index, " rows, not a square window"));
  if (*embed % *heads) throw fail(str(*embed, " channels do not split into ", *heads, " heads"));

  // Every layer alike (every published SwinIR is): the builder and the cost walk take one depth.
  const int64_t layers = int64_t(key_indices(dict, "layers.").size()), depth = blocks_in(dict, 0);
  for (int64_t i = 1; i < layers; ++i) {
    const auto h = dim_of(dict, str("layers.", i, ".residual_group.blocks.0.attn.relative_position_bias_table"), 2, 1);
    if (blocks_in(dict, i) != depth || h != heads)
      throw fail(str("layer ", i, " has ", blocks_in(dict, i), " blocks and ", h.value_or(0), " heads where layer 0 has ", depth,
                     " and ", *heads, "; only uniform layers are supported"));
  }

  // A pixel unshuffle before conv_first packs u x u pixels into the channels: in = 3 * u^2 (or 1 * u^2).
  int64_t unshuffle = 1, channels = *in;
  if (unshuffled) {
    const std::optional<int> u3 = shuffle_factor(*in, 3), u1 = shuffle_factor(*in, 1);
    if (u3 && *u3 > 1) unshuffle = *u3, channels = 3;
    else if (u1 && *u1 > 1) unshuffle = *u1, channels = 1;
    else throw fail(str("conv_first.1 takes ", *in, " channels, not 1 or 3 times a square unshuffle"));
  }
  const int64_t out = dict.count("conv_last.weight") ? dim_of(dict, "conv_last.weight", 4, 0).value_or(channels) : channels;
  const Upsampler u = upsampler_of(dict);
  const int64_t scale = reconstruction_scale(dict, u, out, source);
  if (scale % unshuffle) throw fail(str("a x", scale, " reconstruction after a x", unshuffle, " unshuffle is not a whole scale"));
  const int64_t feat = dict.count("conv_before_upsample.0.weight") ? dim_of(dict, "conv_before_upsample.0.weight", 4, 0).value_or(64) : 64;

  DetectedArch d;
  d.arch = "swinir";
  d.scale = int(scale / unshuffle);
  d.in_channels = int(channels);
  d.out_channels = int(out);
  d.params = {{"embed_dim", double(*embed)},
              {"layers", double(layers)},
              {"depth", double(depth)},
              {"heads", double(*heads)},
              {"window_size", double(window)},
              {"mlp_hidden", double(*hidden)},
              {"upsampler", double(int(u))},
              {"num_feat", double(feat)},
              {"three_conv", dict.count("conv_after_body.weight") ? 0.0 : 1.0},
              // spandrel's rule: the window-7 models are the JPEG ones, trained on 0-255 inputs.
              {"img_range", window == 7 ? 255.0 : 1.0},
              {"unshuffle", double(unshuffle)}};
  return d;
}

}  // namespace

Architecture swinir_architecture() {
  return {"swinir", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<SwinIR>(dict, d, source);
          }};
}

}  // namespace framelift::models
