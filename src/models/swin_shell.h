#pragma once
// The shell that the Swin-style networks of the SwinIR lineage (SwinIR, Swin2SR, SRFormer, HAT,
// DRCT, ATD, DAT) run their own blocks in. Upstream copies it from file to file; here it is one
// template over the network's residual group, so that each network file describes only its
// blocks and what its detection reads:
//   normalise       (x - DIV2K mean) * img_range; ATD first mirror-pads itself to the window,
//                   SwinIR may pixel-unshuffle after
//   conv_first      3x3 to the embedding's channels
//   patch embed     Swin2SR's 1x1 patch_embed.proj, then the optional embedding LayerNorm, into
//                   token layout [B, H, W, C]
//   body            the groups in order, each given the map's shift mask (built once per size)
//   norm            a LayerNorm, back to [B, C, H, W]
//   conv_after_body 1conv, 3conv or none, plus conv_first's features
//   reconstruction  swin_reconstruction.h's, then the normalisation undone and ATD's pad cropped
// State dict keys are upstream's: conv_first (conv_first.1 after an unshuffle), patch_embed.proj,
// the embedding norm (patch_embed.norm, DAT's before_RG.1), the groups' own, norm,
// conv_after_body, the reconstruction's.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "models/native_model.h"
#include "models/swin_convs.h"
#include "models/swin_reconstruction.h"
#include "models/swin_windows.h"
#include "models/token_layers.h"

namespace framelift::models {

inline at::Tensor to_map(const at::Tensor& t) { return t.permute({0, 3, 1, 2}); }     // [B, H, W, C] -> [B, C, H, W]
inline at::Tensor to_tokens(const at::Tensor& m) { return m.permute({0, 2, 3, 1}); }  // and back

// What the shell reads and runs around a network's groups. The defaults are SwinIR's.
struct SwinFrame {
  int64_t in = 3, out = 3, embed = 96, groups = 4, feat = 64;
  int64_t scale = 1;      // the reconstruction's, before an unshuffle divides it
  int64_t unshuffle = 1;  // SwinIR's pixel unshuffle before conv_first (1: none)
  SwinUpsampler upsampler = SwinUpsampler::None;
  double img_range = 1;
  bool mean = true;            // subtract DIV2K's mean (ATD's no_norm files: no)
  int64_t mirror_pad = 0;      // ATD pads its input itself, to multiples of this (0: the caller does)
  bool embed_conv = false;     // Swin2SR's 1x1 patch_embed.proj
  std::string embed_norm = "patch_embed.norm";  // empty: no embedding norm
  bool three_conv = false;     // the groups' and conv_after_body's resi_connection
  bool after_body = true;      // false: no conv_after_body (HAT's and DRCT's "identity")
  // The mask handed to every group for the map's size; none: groups get an undefined tensor.
  std::optional<ShiftMasks> masks;
};

// Upstream's mirror padding (ATD's forward): the map followed by its flip, cropped, so the edge
// pixel repeats (not reflect's); repeated when the padding exceeds the map, which one flip cannot do.
at::Tensor mirror_padded(const at::Tensor& x, int64_t multiple);

// A network's residual group: `Blocks` in token layout, then the residual conv (and Swin2SR's 1x1
// patch embedding) in image layout, plus the group's input. Blocks: tokens [B, H, W, C] and the
// map's shift mask -> tokens, and visit_weights.
template <class Blocks>
struct ResidualGroup {
  Blocks blocks;
  ResidualConv conv;
  Conv2d embed;  // Swin2SR's layers.I.patch_embed.proj; undefined: upstream's identity

  at::Tensor operator()(const at::Tensor& t, const at::Tensor& mask) {
    at::Tensor y = conv(to_map(blocks(t, mask)));
    if (embed.weight.defined()) y = embed(y);
    return to_tokens(y) + t;
  }
  void visit_weights(const TensorVisitor& f) {
    blocks.visit_weights(f);
    conv.visit_weights(f);
    if (embed.weight.defined()) visit(embed, f);
  }
};

// Blocks that run one after another, each given the map's shift mask (a layer that does not shift
// ignores it).
template <class Layer>
struct LayerStack {
  std::vector<Layer> layers;

  at::Tensor operator()(const at::Tensor& x, const at::Tensor& mask) {
    at::Tensor y = x;
    for (Layer& l : layers) y = l(y, mask);
    return y;
  }
  void visit_weights(const TensorVisitor& f) {
    for (Layer& l : layers) l.visit_weights(f);
  }
};

// Group i's residual conv, "layers.I.conv" in every network of the lineage.
template <class Shape>
ResidualConv read_group_conv(WeightReader& r, int64_t i, const Shape& s) {
  return read_residual_conv(r, "layers." + std::to_string(i) + ".conv", s.embed, s.three_conv);
}

// SwinIR's group layout, which Swin2SR and SRFormer keep: `depth` layers
// "layers.I.residual_group.blocks.J", built as Layer(r, prefix, shape, shifted) with every second
// one shifted, then the residual conv "layers.I.conv".
template <class Layer, class Shape>
ResidualGroup<LayerStack<Layer>> read_swin_group(WeightReader& r, int64_t i, const Shape& s) {
  ResidualGroup<LayerStack<Layer>> g;
  const std::string p = "layers." + std::to_string(i);
  for (int64_t j = 0; j < s.depth; ++j) g.blocks.layers.emplace_back(r, p + ".residual_group.blocks." + std::to_string(j), s, j % 2 == 1);
  g.conv = read_group_conv(r, i, s);
  return g;
}

// The shell around `Group`s: tokens [B, H, W, C] and the map's shift mask -> tokens (the group
// adds its own residual), and visit_weights. Not thread-safe, as every ImageModel.
template <class Group>
class SwinShell final : public NativeModel {
 public:
  // read_group(r, i) reads group i. The shell reads, in upstream's order, conv_first, the patch
  // embedding, the groups, norm, conv_after_body and the reconstruction, then checks that `r` has
  // handed out every tensor (a network reads what precedes conv_first before this).
  SwinShell(WeightReader& r, const DetectedArch& d, SwinFrame frame, const std::function<Group(WeightReader&, int64_t)>& read_group)
      : NativeModel(declared_info(d), r.source()), f_(std::move(frame)) {
    const int64_t in = f_.in * f_.unshuffle * f_.unshuffle;
    first_ = read_conv(r, f_.unshuffle > 1 ? "conv_first.1" : "conv_first", in, f_.embed, 3);
    if (f_.embed_conv) embed_ = read_conv(r, "patch_embed.proj", f_.embed, f_.embed, 1);
    if (!f_.embed_norm.empty()) embed_norm_ = read_layer_norm(r, f_.embed_norm, f_.embed);
    for (int64_t i = 0; i < f_.groups; ++i) groups_.push_back(read_group(r, i));
    norm_ = read_layer_norm(r, "norm", f_.embed);
    if (f_.after_body) after_body_ = read_residual_conv(r, "conv_after_body", f_.embed, f_.three_conv);
    reconstruction_ = SwinReconstruction(r, f_.upsampler, f_.embed, f_.feat, f_.out, f_.scale);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const at::Tensor padded = f_.mirror_pad > 1 ? mirror_padded(input, f_.mirror_pad) : input;
    const at::Tensor mean = f_.mean ? div2k_mean(padded, f_.in) : at::zeros({1, 1, 1, 1}, padded.options());
    at::Tensor x = padded - mean;
    if (f_.img_range != 1) x = x * f_.img_range;
    if (f_.unshuffle > 1) x = at::pixel_unshuffle(x, f_.unshuffle);
    const at::Tensor first = first_(x);
    at::Tensor body = features(first);
    if (f_.after_body) body = after_body_(body);
    at::Tensor y = reconstruction_(body + first, x);
    if (f_.img_range != 1) y = y / f_.img_range;
    y = y + mean;
    if (padded.sizes() == input.sizes()) return y;
    const int64_t scale = f_.scale / f_.unshuffle;
    return y.narrow(2, 0, input.size(2) * scale).narrow(3, 0, input.size(3) * scale);
  }

  void visit_weights(const TensorVisitor& f) override {
    visit(first_, f);
    if (embed_.weight.defined()) visit(embed_, f);
    for (LayerNorm* n : {&embed_norm_, &norm_})
      if (n->weight.defined()) n->visit_weights(f);
    for (Group& g : groups_) g.visit_weights(f);
    after_body_.visit_weights(f);
    reconstruction_.visit_weights(f);
    if (f_.masks) f_.masks->clear();  // rebuilt in the new device and precision
  }

 private:
  // The body in token layout, back to [B, C, H, W].
  at::Tensor features(const at::Tensor& x) {
    at::Tensor t = to_tokens(embed_.weight.defined() ? embed_(x) : x);
    if (embed_norm_.weight.defined()) t = embed_norm_(t);
    const at::Tensor mask = f_.masks ? f_.masks->for_map(t) : at::Tensor();
    for (Group& g : groups_) t = g(t, mask);
    return to_map(norm_(t)).contiguous();
  }

  SwinFrame f_;
  Conv2d first_, embed_;
  LayerNorm embed_norm_, norm_;
  std::vector<Group> groups_;
  ResidualConv after_body_;  // no convs when f_.after_body is false
  SwinReconstruction reconstruction_;
};

}  // namespace framelift::models
