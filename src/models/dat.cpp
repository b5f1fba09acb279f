// DAT (Chen et al. 2023, "Dual Aggregation Transformer for Image Super-Resolution"): SwinIR's
// frame (conv, residual groups, LayerNorm, conv plus the first conv's features, a pixel-shuffle
// reconstruction) whose groups alternate two blocks, each x + attn(LN(x)), then x + SGFN(LN(x)):
//   spatial (even blocks)  half the channels attend in s0 x s1 windows, the other half in s1 x s0
//                          ones, with a position bias from a small MLP of the relative offsets;
//                          some blocks on windows shifted by half a window (upstream's rule below)
//   channel (odd blocks)   XCiT's transposed attention: per head, channels attend to channels
//                          over all tokens of the map (L2-normalised, a learned temperature)
// Both join their attention with a depthwise conv of v (conv, BatchNorm, GELU) through an
// adaptive interaction: a channel gate from one branch (pooled over the map) and a spatial gate
// from the other scale each. SGFN: fc1, GELU, half the channels times a depthwise conv of the
// LayerNormed other half, fc2.
//
// The spatial attention pads q, k and v with zeros (after the projection, so padded tokens have
// zero keys and values but still take softmax weight) on the right and bottom to a multiple of
// the larger split size: the network pads itself, and tiles must start on that grid.
//
// State dict (zhengchen1999/DAT and chaiNNer-org/spandrel): conv_first, before_RG.1 (LayerNorm),
// layers.I.blocks.J.{norm1, attn.{qkv, proj, dwconv.{0,1}, channel_interaction.{1,2,4},
// spatial_interaction.{0,1,3}, attns.{0,1}.{rpe_biases, relative_position_index, pos.*},
// attn_mask_{0,1}} (spatial) or attn.{qkv, proj, temperature, dwconv, *_interaction} (channel),
// norm2, ffn.{fc1, sg.{norm, conv}, fc2}}, layers.I.conv (or .conv.{0,2,4}), norm,
// conv_after_body (or .{0,2,4}), then conv_before_upsample.0, upsample.{0,2,..}, conv_last or
// upsample.0 alone (pixelshuffledirect).
#include <ATen/ATen.h>

#include <algorithm>
#include <optional>

#include "arch/declaration.h"
#include "infer/layout_ops.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/swin_convs.h"
#include "models/swin_layout.h"
#include "models/swin_shell.h"
#include "models/swin_windows.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

// The lineage's sizes (no square window) and DAT's own: the split windows, the SGFN's width.
struct DatShape : SwinShape {
  int64_t split_h = 8, split_w = 32;
  bool qkv_bias = true;
};

DatShape shape_of(const DetectedArch& d) {
  const auto& p = d.params;
  DatShape s = swin_shape_as<DatShape>(d);
  s.split_h = int64_t(p.get("split_height", 8));
  s.split_w = int64_t(p.get("split_width", 32));
  s.hidden = int64_t(p.get("ffn_hidden", 4.0 * double(s.embed)));
  s.qkv_bias = p.get("qkv_bias", 1) != 0;
  return s;
}

// Upstream's schedule of shifted spatial blocks: in even groups blocks 2, 6, 10, ..., in odd
// groups 0, 4, 8, ... (every other spatial block, the phase alternating between groups).
bool shifted(int64_t group, int64_t block) {
  return group % 2 == 0 ? block > 0 && (block - 2) % 4 == 0 : block % 4 == 0;
}

Linear read_qkv(WeightReader& r, const std::string& p, const DatShape& s) {
  return {r.tensor(p + ".weight", {3 * s.embed, s.embed}), s.qkv_bias ? r.tensor(p + ".bias", {3 * s.embed}) : at::Tensor()};
}

// The adaptive interaction module both attention blocks end with: a depthwise conv branch of v,
// and two gates that cross between it and the attention. C/8 and C/16 round down, as upstream's
// dim // 8 (DAT-light's 60 channels: 7 and 3).
class Interaction {
 public:
  Interaction(WeightReader& r, const std::string& p, int64_t c)
      : dwconv_(read_conv_batch_norm(r, p + ".dwconv.0", p + ".dwconv.1", 1, c, 3)),
        channel_down_(read_conv_batch_norm(r, p + ".channel_interaction.1", p + ".channel_interaction.2", c, c / 8, 1)),
        channel_up_(read_conv(r, p + ".channel_interaction.4", c / 8, c, 1)),
        spatial_down_(read_conv_batch_norm(r, p + ".spatial_interaction.0", p + ".spatial_interaction.1", c, c / 16, 1)),
        spatial_up_(read_conv(r, p + ".spatial_interaction.3", c / 16, 1, 1)) {}

  at::Tensor conv(const at::Tensor& v) const { return infer::gelu(depthwise(dwconv_, v)); }  // [B, C, H, W]
  // sigmoid of the channel map [B, C, 1, 1] and of the spatial map [B, 1, H, W] of a [B, C, H, W] map.
  at::Tensor channel_gate(const at::Tensor& x) const {
    return at::sigmoid(channel_up_(infer::gelu(channel_down_(x.mean({2, 3}, true)))));
  }
  at::Tensor spatial_gate(const at::Tensor& x) const { return at::sigmoid(spatial_up_(infer::gelu(spatial_down_(x)))); }

  void visit_weights(const TensorVisitor& f) {
    for (Conv2d* c : {&dwconv_, &channel_down_, &channel_up_, &spatial_down_, &spatial_up_}) visit(*c, f);
  }

 private:
  Conv2d dwconv_, channel_down_, channel_up_, spatial_down_, spatial_up_;
};

// One of the spatial attention's two branches: C/2 channels in wh x ww windows.
struct SplitWindows {
  int64_t wh, ww;
  at::Tensor bias;  // [heads / 2, wh ww, wh ww]
  ShiftMasks masks;
};

class SpatialAttention {
 public:
  SpatialAttention(WeightReader& r, const std::string& p, const DatShape& s, bool shift)
      : heads_(s.heads / 2),
        shift_(shift),
        qkv_(read_qkv(r, p + ".qkv", s)),
        proj_(read_linear(r, p + ".proj", s.embed, s.embed)),
        aim_(r, p, s.embed) {
    const int64_t half = s.embed / 2, pos = half / 4 / 4;  // upstream's DynamicPosBias(dim // 4) of dim // 2
    for (int i = 0; i < 2; ++i) {
      const int64_t wh = i == 0 ? s.split_h : s.split_w, ww = i == 0 ? s.split_w : s.split_h;
      const std::string a = str(p, ".attns.", i);
      r.recomputed(a + ".rpe_biases", {(2 * wh - 1) * (2 * ww - 1), 2});  // relative_offsets(wh, ww)
      r.recomputed(a + ".relative_position_index", {wh * ww, wh * ww});
      branches_.push_back({wh, ww, dynamic_position_bias(r, a + ".pos", pos, heads_, wh, ww), ShiftMasks(wh, ww, wh / 2, ww / 2)});
    }
    for (const char* m : {".attn_mask_0", ".attn_mask_1"})  // the training crop's; rebuilt per size
      if (r.has(p + m)) r.recomputed(p + m, {-1, s.split_h * s.split_w, s.split_h * s.split_w});
    grid_ = std::max(s.split_h, s.split_w);
  }

  at::Tensor operator()(const at::Tensor& x) {  // [B, H, W, C], normed
    const int64_t b = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
    const at::Tensor qkv = qkv_(x);
    const at::Tensor v = to_map(qkv.narrow(-1, 2 * c, c));
    const int64_t hp = (h + grid_ - 1) / grid_ * grid_, wp = (w + grid_ - 1) / grid_ * grid_;
    const at::Tensor padded = at::constant_pad_nd(qkv, {0, 0, 0, wp - w, 0, hp - h}).reshape({b, hp, wp, 3, c});
    std::vector<at::Tensor> halves;
    for (size_t i = 0; i < branches_.size(); ++i)
      halves.push_back(attend(branches_[i], padded.narrow(-1, int64_t(i) * c / 2, c / 2)).narrow(1, 0, h).narrow(2, 0, w));
    const at::Tensor attended = at::cat(halves, -1);
    // Here the pooled gate comes from the conv branch and the spatial one from the attention.
    const at::Tensor conv = aim_.conv(v);
    const at::Tensor y = attended * to_tokens(aim_.channel_gate(conv)) + to_tokens(aim_.spatial_gate(to_map(attended)) * conv);
    return proj_(y);
  }

  void visit_weights(const TensorVisitor& f) {
    for (Linear* l : {&qkv_, &proj_}) l->visit_weights(f);
    aim_.visit_weights(f);
    for (SplitWindows& s : branches_) {
      f(s.bias);
      s.masks.clear();  // rebuilt in the new device and precision
    }
  }

 private:
  // qkv: [B, Hp, Wp, 3, C/2] of one branch -> its attention output [B, Hp, Wp, C/2].
  at::Tensor attend(SplitWindows& s, at::Tensor qkv) const {
    const int64_t b = qkv.size(0), hp = qkv.size(1), wp = qkv.size(2);
    if (shift_) qkv = at::roll(qkv, {-s.wh / 2, -s.ww / 2}, {1, 2});
    auto windows = [&](int64_t j) { return window_partition(qkv.select(3, j), s.wh, s.ww); };
    const at::Tensor mask = shift_ ? s.masks.for_map(qkv) : at::Tensor();
    at::Tensor y = window_merge(biased_attention(windows(0), windows(1), windows(2), heads_, s.bias, mask), b, hp, wp, s.wh, s.ww);
    return shift_ ? at::roll(y, {s.wh / 2, s.ww / 2}, {1, 2}) : y;
  }

  int64_t heads_, grid_ = 1;
  bool shift_;
  Linear qkv_, proj_;
  Interaction aim_;
  std::vector<SplitWindows> branches_;
};

class ChannelAttention {
 public:
  ChannelAttention(WeightReader& r, const std::string& p, const DatShape& s)
      : heads_(s.heads),
        qkv_(read_qkv(r, p + ".qkv", s)),
        proj_(read_linear(r, p + ".proj", s.embed, s.embed)),
        temperature_(r.tensor(p + ".temperature", {s.heads, 1, 1})),
        aim_(r, p, s.embed) {}

  at::Tensor operator()(const at::Tensor& x) const {  // [B, H, W, C], normed
    const int64_t b = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
    const at::Tensor qkv = qkv_(x);
    // [B, heads, C/heads, N]: per head, each channel's values over all tokens. An fp32 island: q and
    // k are normalised over every token of the map and multiplied across all of them, and in bf16
    // that alone took the test frame from 55 to 33 dB against fp32.
    auto part = [&](int64_t j) {
      return qkv.narrow(-1, j * c, c).reshape({b, h * w, heads_, c / heads_}).permute({0, 2, 3, 1}).to(at::kFloat);
    };
    auto unit = [](const at::Tensor& t) { return t / t.norm(2, -1, true).clamp_min(1e-12); };  // F.normalize
    const at::Tensor scores = at::matmul(unit(part(0)), unit(part(1)).transpose(-2, -1)) * temperature_.to(at::kFloat);
    const at::Tensor attended =
        at::matmul(at::softmax(scores, -1), part(2)).permute({0, 3, 1, 2}).reshape({b, h, w, c}).to(x.scalar_type());
    // Here the pooled gate comes from the attention and the spatial one from the conv branch.
    const at::Tensor conv = aim_.conv(to_map(qkv.narrow(-1, 2 * c, c)));
    const at::Tensor y = attended * to_tokens(aim_.spatial_gate(conv)) + to_tokens(conv * aim_.channel_gate(to_map(attended)));
    return proj_(y);
  }

  void visit_weights(const TensorVisitor& f) {
    for (Linear* l : {&qkv_, &proj_}) l->visit_weights(f);
    f(temperature_);
    aim_.visit_weights(f);
  }

 private:
  int64_t heads_;
  Linear qkv_, proj_;
  at::Tensor temperature_;
  Interaction aim_;
};

// Spatial-gate feed-forward network.
class Sgfn {
 public:
  Sgfn(WeightReader& r, const std::string& p, const DatShape& s)
      : fc1_(read_linear(r, p + ".fc1", s.embed, s.hidden)),
        norm_(read_layer_norm(r, p + ".sg.norm", s.hidden / 2)),
        conv_(read_conv(r, p + ".sg.conv", 1, s.hidden / 2, 3)),
        fc2_(read_linear(r, p + ".fc2", s.hidden / 2, s.embed)) {}

  at::Tensor operator()(const at::Tensor& x) const {  // [B, H, W, C]
    const std::vector<at::Tensor> halves = infer::gelu(fc1_(x)).chunk(2, -1);
    return fc2_(halves[0] * to_tokens(depthwise(conv_, to_map(norm_(halves[1])))));
  }

  void visit_weights(const TensorVisitor& f) {
    for (Linear* l : {&fc1_, &fc2_}) l->visit_weights(f);
    norm_.visit_weights(f);
    visit(conv_, f);
  }

 private:
  Linear fc1_;
  LayerNorm norm_;
  Conv2d conv_;
  Linear fc2_;
};

class Block {
 public:
  Block(WeightReader& r, const std::string& p, const DatShape& s, int64_t group, int64_t index)
      : norm1_(read_layer_norm(r, p + ".norm1", s.embed)), norm2_(read_layer_norm(r, p + ".norm2", s.embed)), ffn_(r, p + ".ffn", s) {
    if (index % 2 == 0) spatial_.emplace(r, p + ".attn", s, shifted(group, index));
    else channel_.emplace(r, p + ".attn", s);
  }

  // The shell's shift mask is none: the spatial attention keeps one per split window.
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& /*mask*/) {
    const at::Tensor normed = norm1_(x);
    const at::Tensor y = x + (spatial_ ? (*spatial_)(normed) : (*channel_)(normed));
    return y + ffn_(norm2_(y));
  }

  void visit_weights(const TensorVisitor& f) {
    for (LayerNorm* n : {&norm1_, &norm2_}) n->visit_weights(f);
    if (spatial_) spatial_->visit_weights(f);
    if (channel_) channel_->visit_weights(f);
    ffn_.visit_weights(f);
  }

 private:
  LayerNorm norm1_, norm2_;
  std::optional<SpatialAttention> spatial_;
  std::optional<ChannelAttention> channel_;
  Sgfn ffn_;
};

using Group = ResidualGroup<LayerStack<Block>>;

std::unique_ptr<ImageModel> build(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) {
  const DatShape s = shape_of(d);
  SwinFrame f = swin_frame(s);
  f.embed_norm = "before_RG.1";
  f.masks.reset();  // the split windows keep their own
  WeightReader r(dict, source);
  return std::make_unique<SwinShell<Group>>(r, d, std::move(f), [&](WeightReader& r, int64_t i) {
    Group g;
    for (int64_t j = 0; j < s.depth; ++j) g.blocks.layers.emplace_back(r, str("layers.", i, ".blocks.", j), s, i, j);
    g.conv = read_group_conv(r, i, s);
    return g;
  });
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  const std::string block = "layers.0.blocks.0.", branch = block + "attn.attns.0.";
  if (!has_keys(dict, {"conv_first.weight", "before_RG.1.weight", branch + "rpe_biases", branch + "relative_position_index",
                       block + "ffn.sg.conv.weight", block + "ffn.fc1.weight"})) return std::nullopt;
  const SwinLayoutChecks checks(dict, source, "DAT");
  const int64_t embed = checks.dim("conv_first.weight", 4, 0), in = checks.dim("conv_first.weight", 4, 1);

  // The split sizes: branch 0's window is s0 x s1; the last row of its offset table is (s0 - 1, s1 - 1),
  // the only place the order shows (branch 1's s1 x s0 tables have the same shapes).
  const at::Tensor& offsets = dict.at(branch + "rpe_biases");
  if (offsets.dim() != 2 || offsets.size(1) != 2 || offsets.size(0) < 1) throw checks.fail(branch + "rpe_biases is not a table of offsets");
  const at::Tensor last = offsets[-1].to(at::kDouble);
  // Values, not shapes: bounded before llround, which is undefined past int64's range.
  for (int k = 0; k < 2; ++k)
    if (!(std::fabs(last[k].item<double>()) <= arch::kMaxParam)) throw checks.fail(branch + "rpe_biases holds an offset beyond any window");
  const int64_t s0 = std::llround(last[0].item<double>()) + 1, s1 = std::llround(last[1].item<double>()) + 1;
  const int64_t n = checks.dim(branch + "relative_position_index", 2, 0);
  if (s0 < 1 || s1 < 1 || s0 * s1 != n || offsets.size(0) != (2 * s0 - 1) * (2 * s1 - 1))
    throw checks.fail(str("split ", s0, "x", s1, " from rpe_biases does not fit its ", offsets.size(0), " rows and ", n, " window tokens"));
  if (std::max(s0, s1) % std::min(s0, s1))
    throw checks.fail(str("split ", s0, "x", s1, ": upstream pads to the larger side only, which needs the smaller to divide it"));

  const int64_t layers = int64_t(key_indices(dict, "layers.").size());
  const int64_t depth = int64_t(key_indices(dict, "layers.0.blocks.").size());
  // Heads: the channel blocks' temperatures, or twice the spatial branches' position-bias heads.
  auto heads_of = [&](int64_t i) {
    const std::string b = str("layers.", i, ".blocks.");
    if (dict.count(b + "1.attn.temperature")) return checks.dim(b + "1.attn.temperature", 3, 0);
    return 2 * checks.dim(b + "0.attn.attns.0.pos.pos3.2.weight", 2, 0);
  };
  const int64_t heads = heads_of(0);
  // The declared constraints (src/arch/dat.cpp) before anything divides by these.
  arch::check_shapes("dat", {{"embed_dim", double(embed)}, {"heads", double(heads)}, {"in_channels", double(in)}}, source);
  checks.expect_uniform(layers, [&](int64_t i) { return int64_t(key_indices(dict, str("layers.", i, ".blocks.")).size()); }, heads_of);
  const int64_t hidden = checks.dim(block + "ffn.fc1.weight", 2, 0);
  if (hidden % 2) throw checks.fail(str("ffn.fc1 makes ", hidden, " channels, which the spatial gate cannot halve"));

  const bool direct = !dict.count("conv_last.weight");
  int64_t scale = 1, feat = 64;
  if (direct) {
    const auto o = dim_of(dict, "upsample.0.weight", 4, 0);
    const std::optional<int> s = o ? shuffle_factor(*o, in) : std::nullopt;
    if (!s) throw checks.fail("neither conv_last nor an upsample.0 making input channels times a square scale");
    scale = *s;
  } else {
    const UpsamplerScale s = pixel_shuffle_scale(dict, "upsample");
    if (!s.error.empty()) throw checks.fail(s.error);
    scale = s.scale;
    feat = checks.dim("conv_last.weight", 4, 1);
  }

  DetectedArch d;
  d.arch = "dat";
  d.scale = int(scale);
  d.in_channels = int(in);
  d.out_channels = int(in);
  d.params = {{"embed_dim", double(embed)},
              {"layers", double(layers)},
              {"depth", double(depth)},
              {"heads", double(heads)},
              {"split_height", double(s0)},
              {"split_width", double(s1)},
              {"ffn_hidden", double(hidden)},
              {"upsampler", direct ? 2.0 : 1.0},
              {"num_feat", double(feat)},
              {"three_conv", dict.count("conv_after_body.weight") ? 0.0 : 1.0},
              {"qkv_bias", dict.count(block + "attn.qkv.bias") ? 1.0 : 0.0}};
  return d;
}

}  // namespace

Architecture dat_architecture() {
  return {"dat", detect, build};
}

}  // namespace framelift::models
