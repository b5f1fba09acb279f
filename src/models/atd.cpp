// ATD (Zhang et al. CVPR 2024, "Transcending the Limit of Local Window: Advanced Super-Resolution
// Transformer with Adaptive Token Dictionary"): SwinIR's frame (conv, patch LayerNorm, residual
// groups, LayerNorm, conv plus the first conv's features, a SwinIR reconstruction). Each group
// carries a learned token dictionary td [m, C] through its layers; a layer is
//   n = LN(x), qkv = W n
//   x + SW-MSA(qkv)          (shifted) window attention with a relative-position bias, as Swin
//     + ATD-CA(n, td)        every token attends to the m dictionary tokens: cosine similarity of
//                            reduced-dimension q and k, scaled per dictionary token, softmax over m
//     + AC-MSA(qkv, sim)     tokens grouped by their most similar dictionary token (a sort over the
//                            whole map), cut into groups of category_size, attention inside groups
//   then x + ConvFFN(LN(x)) (fc1, GELU, plus a GELU'd depthwise conv of itself, fc2), and, in all but
//   a group's last layer, the dictionary refined from the map: td = s td + (1 - s) softmax_N(
//   InstanceNorm(sim^T)) x, s = sigmoid(sigma) per dictionary token.
// The category attention and the refinement see every token of the frame, so a tile's output is
// not the whole frame's (see src/arch/atd.cpp for what that costs a tiled run). The category
// attention is in src/models/atd_category.cpp.
//
// Upstream's forward pads the input itself, on the right and bottom to the window multiple, by
// mirroring with the edge pixel repeated (torch.flip then a crop); the shift mask and the
// category groups are built per padded size.
//
// State dict (LabShuHangGU/Adaptive-Token-Dictionary and chaiNNer-org/spandrel): conv_first,
// relative_position_index_SA, patch_embed.norm, layers.I.residual_group.td,
// layers.I.residual_group.layers.J.{norm1, norm2, norm3 (not the last), sigma (not the last), wqkv,
// attn_win.{relative_position_bias_table, proj}, attn_atd.{wq, wk, wv, scale},
// attn_aca.{logit_scale, proj}, convffn.{fc1, dwconv.depthwise_conv.0, fc2}}, layers.I.conv (or
// .conv.{0,2,4}), norm, conv_after_body (or .{0,2,4}), the reconstruction's keys, no_norm (present:
// no DIV2K mean).
#include <ATen/ATen.h>

#include <cmath>
#include <optional>

#include "arch/declaration.h"
#include "infer/layout_ops.h"
#include "models/atd_category.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/swin_convs.h"
#include "models/swin_reconstruction.h"
#include "models/swin_layout.h"
#include "models/swin_shell.h"
#include "models/swin_windows.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

// The lineage's sizes and ATD's own: the dictionary, its reduced dimension, the ConvFFN's kernel,
// the category groups.
struct AtdShape : SwinShape {
  int64_t tokens = 128, reduced = 20, kernel = 5, category = 256;
  bool qkv_bias = true, mean = true;
};

AtdShape shape_of(const DetectedArch& d) {
  const auto& p = d.params;
  AtdShape s = swin_shape_as<AtdShape>(d);
  s.tokens = int64_t(p.get("num_tokens", 128));
  s.reduced = int64_t(p.get("reducted_dim", 20));
  s.kernel = int64_t(p.get("convffn_kernel", 5));
  s.category = int64_t(p.get("category_size", 256));
  s.qkv_bias = p.get("qkv_bias", 1) != 0;
  s.mean = p.get("mean", 1) != 0;
  return s;
}

// Hands a weight to the visitor (which moves and converts it) but keeps it in float32 on the new
// device: the dictionary's parts are an fp32 island in bf16 runs (see Layer::operator()).
void visit_fp32(at::Tensor& t, const TensorVisitor& f) {
  if (!t.defined()) return;
  at::Tensor probe = t;
  f(probe);
  t = t.to(probe.device(), at::kFloat);
}

class Layer {
 public:
  Layer(WeightReader& r, const std::string& p, const AtdShape& s, int64_t index)
      : heads_(s.heads),
        window_(s.window),
        shift_(index % 2 ? s.window / 2 : 0),
        last_(index == s.depth - 1),
        log_tokens_(std::log(double(s.tokens))),
        norm1_(read_layer_norm(r, p + ".norm1", s.embed)),
        norm2_(read_layer_norm(r, p + ".norm2", s.embed)),
        wqkv_{r.tensor(p + ".wqkv.weight", {3 * s.embed, s.embed}), s.qkv_bias ? r.tensor(p + ".wqkv.bias", {3 * s.embed}) : at::Tensor()},
        win_proj_(read_linear(r, p + ".attn_win.proj", s.embed, s.embed)),
        wq_(read_reduced(r, p + ".attn_atd.wq", s.embed, s.reduced, s.qkv_bias)),
        wk_(read_reduced(r, p + ".attn_atd.wk", s.embed, s.reduced, s.qkv_bias)),
        wv_(read_reduced(r, p + ".attn_atd.wv", s.embed, s.embed, s.qkv_bias)),
        atd_scale_(r.tensor(p + ".attn_atd.scale", {s.tokens})),
        category_(r, p + ".attn_aca", s.embed, s.heads, s.category, s.qkv_bias),
        fc1_(read_linear(r, p + ".convffn.fc1", s.embed, s.hidden)),
        dwconv_(read_conv(r, p + ".convffn.dwconv.depthwise_conv.0", 1, s.hidden, s.kernel)),
        fc2_(read_linear(r, p + ".convffn.fc2", s.hidden, s.embed)) {
    const int64_t span = 2 * s.window - 1;
    win_bias_ = gathered_bias(r.tensor(p + ".attn_win.relative_position_bias_table", {span * span, s.heads}),
                              relative_position_index(s.window));
    if (!last_) {
      refine_norm_ = {r.tensor(p + ".norm3.weight", {s.tokens}), r.tensor(p + ".norm3.bias", {s.tokens})};
      sigma_ = r.tensor(p + ".sigma", {s.tokens, 1});
    }
  }

  // x [B, H, W, C] (H, W multiples of the window), td [B, m, C] float32, mask: the map's shift
  // mask (left out unless the layer shifts) -> the new x; td refined in place.
  //
  // An fp32 island in bf16 runs: the dictionary similarity (its q and k, the softmax), which
  // decides every token's category and so the groups of the category attention, the category
  // attention itself (logits scaled by up to 100, no 1/sqrt(d)), and the refinement (an instance
  // norm and a softmax over all N tokens). In bf16 they took the test frame to 31.6 dB against fp32.
  at::Tensor operator()(const at::Tensor& x, at::Tensor& td, const at::Tensor& mask) const {
    const int64_t b = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
    const at::Tensor normed = norm1_(x);
    const at::Tensor qkv = wqkv_(normed);  // [B, H, W, 3C]
    const at::Tensor flat = normed.reshape({b, h * w, c}).to(at::kFloat);

    // ATD-CA: similarity of every token to every dictionary token [B, N, m], then its values.
    auto unit = [](const at::Tensor& t) { return t / t.norm(2, -1, true).clamp_min(1e-12); };  // F.normalize
    const at::Tensor cos = at::matmul(unit(wq_(flat)), unit(wk_(td)).transpose(-2, -1));
    const at::Tensor sim = at::softmax(cos * (atd_scale_.clamp(0, 1) * log_tokens_ + 1), -1);
    const at::Tensor x_atd = at::matmul(sim.to(x.scalar_type()), wv_(td.to(x.scalar_type())));

    const at::Tensor x_aca = category_(qkv.reshape({b, h * w, 3 * c}), sim);

    const at::Tensor m = shift_ ? mask : at::Tensor();
    const at::Tensor x_win = in_windows(qkv, window_, shift_, [&](const at::Tensor& win) {
      const std::vector<at::Tensor> parts = win.chunk(3, -1);
      return biased_attention(parts[0], parts[1], parts[2], heads_, win_bias_, m);
    });

    // Upstream's order of the four terms.
    const at::Tensor y = ((x.reshape({b, h * w, c}) + win_proj_(x_win).reshape({b, h * w, c})) + x_atd) + x_aca;
    const at::Tensor out = y + ffn(norm2_(y), b, h, w);

    if (!last_) {
      // Adaptive token refinement: each dictionary token pulls the map's tokens weighted by its
      // instance-normalised similarity (softmax over all N tokens).
      const at::Tensor weights =
          at::softmax(at::instance_norm(sim.transpose(1, 2), refine_norm_.weight, refine_norm_.bias, {}, {}, true, 0.1, 1e-5, false), -1);
      const at::Tensor keep = at::sigmoid(sigma_);
      td = keep * td + (1 - keep) * at::matmul(weights, out.to(at::kFloat));
    }
    return out.reshape({b, h, w, c});
  }

  void visit_weights(const TensorVisitor& f) {
    for (LayerNorm* n : {&norm1_, &norm2_}) n->visit_weights(f);
    for (Linear* l : {&wqkv_, &win_proj_, &wv_, &fc1_, &fc2_}) l->visit_weights(f);
    for (at::Tensor* t : {&wq_.weight, &wq_.bias, &wk_.weight, &wk_.bias, &atd_scale_, &refine_norm_.weight, &refine_norm_.bias, &sigma_})
      visit_fp32(*t, f);
    f(win_bias_);
    category_.visit_weights(f);
    visit(dwconv_, f);
  }

 private:
  static Linear read_reduced(WeightReader& r, const std::string& p, int64_t in, int64_t out, bool bias) {
    return {r.tensor(p + ".weight", {out, in}), bias ? r.tensor(p + ".bias", {out}) : at::Tensor()};
  }

  // ConvFFN on [B, N, C] tokens of an h x w map.
  at::Tensor ffn(const at::Tensor& x, int64_t b, int64_t h, int64_t w) const {
    const at::Tensor hidden = infer::gelu(fc1_(x));
    const at::Tensor map = hidden.transpose(1, 2).reshape({b, -1, h, w});
    const at::Tensor conv = infer::gelu(depthwise(dwconv_, map)).flatten(2).transpose(1, 2);
    return fc2_(hidden + conv);
  }

  struct Affine {
    at::Tensor weight, bias;
  };

  int64_t heads_, window_, shift_;
  bool last_;
  double log_tokens_;
  LayerNorm norm1_, norm2_;
  Linear wqkv_, win_proj_, wq_, wk_, wv_;
  at::Tensor atd_scale_, win_bias_;
  CategoryAttention category_;
  Linear fc1_;
  Conv2d dwconv_;
  Linear fc2_;
  Affine refine_norm_;
  at::Tensor sigma_;
};

// A group's layers, which carry its token dictionary from one to the next.
struct DictionaryLayers {
  at::Tensor td;  // [m, C]
  std::vector<Layer> layers;

  at::Tensor operator()(const at::Tensor& x, const at::Tensor& mask) const {
    at::Tensor dictionary = td.unsqueeze(0).expand({x.size(0), -1, -1});
    at::Tensor y = x;
    for (const Layer& l : layers) y = l(y, dictionary, mask);
    // Tokens over a contiguous [B, C, H, W] map, which the group's conv then reads: ATD's results
    // were taken that way, and a channels-last input would round that conv differently.
    return to_tokens(to_map(y).contiguous());
  }
  void visit_weights(const TensorVisitor& f) {
    visit_fp32(td, f);
    for (Layer& l : layers) l.visit_weights(f);
  }
};

using Group = ResidualGroup<DictionaryLayers>;

std::unique_ptr<ImageModel> build(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) {
  const AtdShape s = shape_of(d);
  SwinFrame f = swin_frame(s);
  f.mean = s.mean;
  f.mirror_pad = s.window;  // upstream's forward pads itself
  WeightReader r(dict, source);
  const int64_t n = s.window * s.window;
  r.recomputed("relative_position_index_SA", {n, n});  // a pure function of the window size
  if (!s.mean) r.recomputed("no_norm", {1});
  return std::make_unique<SwinShell<Group>>(r, d, std::move(f), [&](WeightReader& r, int64_t i) {
    Group g;
    const std::string p = str("layers.", i, ".residual_group");
    g.blocks.td = r.tensor(p + ".td", {s.tokens, s.embed});
    for (int64_t j = 0; j < s.depth; ++j) g.blocks.layers.emplace_back(r, str(p, ".layers.", j), s, j);
    g.conv = read_group_conv(r, i, s);
    return g;
  });
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  const std::string group = "layers.0.residual_group.", layer = group + "layers.0.";
  if (!has_keys(dict, {"conv_first.weight", "relative_position_index_SA", group + "td", layer + "attn_atd.scale",
                       layer + "attn_aca.logit_scale", layer + "wqkv.weight"})) return std::nullopt;
  const SwinLayoutChecks checks(dict, source, "ATD");
  if (dict.count("absolute_pos_embed"))
    throw checks.fail("absolute_pos_embed (ape) is a position embedding of the training crop's size, which no other size can use");
  const int64_t embed = checks.dim("conv_first.weight", 4, 0), in = checks.dim("conv_first.weight", 4, 1);
  const int64_t n = checks.dim("relative_position_index_SA", 2, 0);
  const int64_t window = std::llround(std::sqrt(double(n)));
  if (window * window != n || window % 2)
    throw checks.fail(str("relative_position_index_SA has ", n, " rows, not an even window's square"));

  const int64_t layers = int64_t(key_indices(dict, "layers.").size());
  auto depth_of = [&](int64_t i) { return int64_t(key_indices(dict, str("layers.", i, ".residual_group.layers.")).size()); };
  auto heads_of = [&](int64_t i) {
    return checks.dim(str("layers.", i, ".residual_group.layers.0.attn_win.relative_position_bias_table"), 2, 1);
  };
  const int64_t depth = depth_of(0), heads = heads_of(0);
  checks.expect_uniform(layers, depth_of, heads_of, "group", "layers");
  // The declared constraints (src/arch/atd.cpp) before anything divides by these.
  arch::check_shapes("atd", {{"embed_dim", double(embed)}, {"heads", double(heads)}, {"in_channels", double(in)}}, source);

  const SwinUpsampler u = swin_upsampler_of(dict);
  const int64_t scale = swin_reconstruction_scale(dict, u, in, source, "ATD");
  const int64_t feat = u == SwinUpsampler::PixelShuffle || u == SwinUpsampler::NearestConv ? swin_reconstruction_features(dict) : 64;
  if (u == SwinUpsampler::NearestConv && scale != 4) throw checks.fail(str("nearest+conv at x", scale, ": upstream builds it for x4 only"));
  // The category size is no tensor's shape: spandrel's rule, upstream's published values (ATD-light
  // 128, ATD 256).
  const bool light = u == SwinUpsampler::PixelShuffleDirect && embed == 48;

  DetectedArch d;
  d.arch = "atd";
  d.scale = int(scale);
  d.in_channels = int(in);
  d.out_channels = int(in);
  d.params = {{"embed_dim", double(embed)},
              {"layers", double(layers)},
              {"depth", double(depth)},
              {"heads", double(heads)},
              {"window_size", double(window)},
              {"num_tokens", double(checks.dim(layer + "attn_atd.scale", 1, 0))},
              {"reducted_dim", double(checks.dim(layer + "attn_atd.wq.weight", 2, 0))},
              {"convffn_kernel", double(checks.dim(layer + "convffn.dwconv.depthwise_conv.0.weight", 4, 2))},
              {"mlp_hidden", double(checks.dim(layer + "convffn.fc1.weight", 2, 0))},
              {"category_size", light ? 128.0 : 256.0},
              {"upsampler", double(int(u))},
              {"num_feat", double(feat)},
              {"three_conv", dict.count("conv_after_body.weight") ? 0.0 : 1.0},
              {"qkv_bias", dict.count(layer + "wqkv.bias") ? 1.0 : 0.0},
              {"mean", dict.count("no_norm") ? 0.0 : 1.0},
              {"patch_norm", dict.count("patch_embed.norm.weight") ? 1.0 : 0.0}};
  return d;
}

}  // namespace

Architecture atd_architecture() {
  return {"atd", detect, build};
}

}  // namespace framelift::models
