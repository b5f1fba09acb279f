// OmniSR (Omni Aggregation Networks, Wang et al. CVPR 2023), used by community models such as
// 4x_WTP_descreenton. A light transformer-style network on num_feat features:
//
//   input conv -> res_num OSAG groups -> output conv + input conv's features -> conv + pixel shuffle
//
// Each OSAG group is block_num OSA blocks, a 1x1 conv, a residual over the group and an ESA
// (enhanced spatial attention) gate. An OSA block mixes information along every axis in turn:
// an MBConv (depthwise conv + squeeze-excitation), then attention inside window_size^2 windows
// ("block"), channel attention inside those windows, attention over a dilated grid that spans
// the whole image, and channel attention over the same pixel offset of every window; each
// attention is followed by a gated depthwise feed-forward. Every sub-layer is residual, and the
// attentions and feed-forwards are pre-normalised (LayerNorm over channels). There is no
// image-level skip: the upsampler maps features straight to pixels.
//
// Windows need H and W to be multiples of window_size (upstream zero-pads; framelift's callers
// reflect-pad to size_multiple, which keeps the borders natural). The grid attentions and ESA see
// the whole input, so a tile's output depends on all of the tile, not only its neighbourhood:
// tiles blend well with a generous overlap but never bit-exactly.
//
// State dict (prefix of group g, block b: residual_layer.g.residual_layer.b.layer):
//   input, output, up.0                         convs; biases only with the model's bias flag
//   .0.fn.{0,2,5} .0.fn.4.gate.{1,3}            MBConv: 1x1, depthwise 3x3, SE linears, 1x1
//   .{2,8}.norm .{2,8}.fn.{to_qkv,to_out.0,rel_pos_bias}   block / grid window attention
//   .{5,11}.norm .{5,11}.fn.{temperature,qkv,qkv_dwconv,project_out}   channel attention
//   .{4,6,10,12}.norm .{..}.fn.{project_in,dwconv,project_out}           gated feed-forward
//   residual_layer.g.residual_layer.<block_num>   1x1 conv closing the group
//   residual_layer.g.esa.{conv1,conv_f,conv2,conv3,conv4}
// Upstream: Francis0625/Omni-SR (components/OmniSR.py, ops/OSA.py, OSAG.py, esa.py, layernorm.py),
// as packaged in chaiNNer-org/spandrel architectures/OmniSR, whose detection this follows;
// tests/models/arch_omnisr_test.cpp holds values of that code on the real checkpoint.
#include <algorithm>
#include <cmath>

#include <ATen/ATen.h>

#include "arch/declaration.h"
#include "infer/conv_layout.h"
#include "infer/fp32_islands.h"
#include "infer/layout_ops.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kHeads = 4;             // every attention splits the features into 4 heads
constexpr double kTokenNormEps = 1e-5;    // nn.LayerNorm default (window attentions)
constexpr double kChannelNormEps = 1e-6;  // upstream LayerNorm2d (everything in NCHW layout)
constexpr int64_t kEsaMinSide = 16;       // ESA: stride-2 conv then a 7x7 max pool need >= 15 px

struct OmniShape {
  int64_t in = 3, out = 3, feat = 64, res_num = 5, block_num = 1, window = 8, scale = 4;
  bool bias = true, pe = true;
};

OmniShape shape_of(const DetectedArch& d) {
  OmniShape s;
  s.in = d.in_channels;
  s.out = d.out_channels;
  s.scale = d.scale;
  const auto& p = d.params;
  s.feat = static_cast<int64_t>(p.get("num_feat", double(s.feat)));
  s.res_num = static_cast<int64_t>(p.get("res_num", double(s.res_num)));
  s.block_num = static_cast<int64_t>(p.get("block_num", double(s.block_num)));
  s.window = static_cast<int64_t>(p.get("window_size", double(s.window)));
  s.bias = p.get("bias", 1) != 0;
  s.pe = p.get("pe", 1) != 0;
  return s;
}

// Depthwise convolution (one filter per channel); read_conv stores it as [C, 1, k, k].
at::Tensor depthwise(const Conv2d& c, const at::Tensor& x) {
  return infer::conv2d(x, c.weight, c.bias, c.stride, c.padding, 1, c.weight.size(0));
}

// Upstream's LayerNorm2d: normalises each pixel over its channels (biased variance, eps inside the
// square root), which is exactly nn.LayerNorm on the channels-last view. The native models run in
// channels-last memory, so that view is contiguous and layer_norm needs no copy.
struct ChannelNorm {
  at::Tensor weight, bias;
  at::Tensor operator()(const at::Tensor& x) const {
    return infer::layer_norm(x.permute({0, 2, 3, 1}), {weight.size(0)}, weight, bias, kChannelNormEps).permute({0, 3, 1, 2});
  }
};

ChannelNorm read_norm(WeightReader& r, const std::string& prefix, int64_t c) {
  return {r.tensor(prefix + ".weight", {c}), r.tensor(prefix + ".bias", {c})};
}

// MBConv with expansion 1: 1x1, GELU, depthwise 3x3, GELU, squeeze-excitation (channel means ->
// C/4 -> SiLU -> C -> sigmoid gate), 1x1, plus the input.
struct MbConv {
  Conv2d expand, dw, project;
  at::Tensor se_reduce, se_expand;  // Linear weights, no bias

  MbConv() = default;
  MbConv(WeightReader& r, const std::string& p, int64_t c)
      : expand(read_conv(r, p + ".fn.0", c, c, 1)),
        dw(read_conv(r, p + ".fn.2", 1, c, 3)),
        project(read_conv(r, p + ".fn.5", c, c, 1)),
        se_reduce(r.tensor(p + ".fn.4.gate.1.weight", {c / 4, c})),
        se_expand(r.tensor(p + ".fn.4.gate.3.weight", {c, c / 4})) {}

  at::Tensor operator()(const at::Tensor& x) const {
    at::Tensor y = infer::gelu(depthwise(dw, infer::gelu(expand(x))));
    at::Tensor gate = at::sigmoid(at::linear(at::silu(at::linear(y.mean({2, 3}), se_reduce)), se_expand));
    return project(y * gate.unsqueeze(-1).unsqueeze(-1)) + x;
  }
  void visit_weights(const TensorVisitor& f) {
    for (Conv2d* c : {&expand, &dw, &project}) visit(*c, f);
    f(se_reduce);
    f(se_expand);
  }
};

// Window partitions of [B, C, H, W] into tokens [B * nh * nw, ws * ws, C]. "Block" windows are
// ws x ws squares of neighbouring pixels; "grid" windows take one pixel from each of ws x ws
// cells of size (H/ws) x (W/ws), so their pixels lie H/ws apart and span the whole image.
at::Tensor to_windows(const at::Tensor& x, int64_t ws, bool grid) {
  const int64_t b = x.size(0), c = x.size(1), nh = x.size(2) / ws, nw = x.size(3) / ws;
  at::Tensor t = grid ? x.reshape({b, c, ws, nh, ws, nw}).permute({0, 3, 5, 2, 4, 1})
                      : x.reshape({b, c, nh, ws, nw, ws}).permute({0, 2, 4, 3, 5, 1});
  return t.reshape({b * nh * nw, ws * ws, c});
}

at::Tensor from_windows(const at::Tensor& t, at::IntArrayRef shape, int64_t ws, bool grid) {
  const int64_t b = shape[0], c = shape[1], nh = shape[2] / ws, nw = shape[3] / ws;
  at::Tensor x = t.reshape({b, nh, nw, ws, ws, c});
  x = grid ? x.permute({0, 5, 3, 1, 4, 2}) : x.permute({0, 5, 1, 3, 2, 4});
  return x.reshape(shape);
}

// Multi-head self-attention over the ws^2 tokens of each window, pre-normalised and residual,
// with a learned bias per head for every relative offset between two tokens (when pe).
struct WindowAttention {
  at::Tensor norm_weight, norm_bias, to_qkv, to_out;
  at::Tensor pos_bias;  // [heads, ws^2, ws^2], gathered once from the [(2ws-1)^2, heads] table
  int64_t ws = 8;
  bool grid = false;

  WindowAttention() = default;
  WindowAttention(WeightReader& r, const std::string& p, int64_t c, int64_t window, bool pe, bool grid_)
      : norm_weight(r.tensor(p + ".norm.weight", {c})),
        norm_bias(r.tensor(p + ".norm.bias", {c})),
        to_qkv(r.tensor(p + ".fn.to_qkv.weight", {3 * c, c})),
        to_out(r.tensor(p + ".fn.to_out.0.weight", {c, c})),
        ws(window),
        grid(grid_) {
    if (!pe) return;
    const int64_t span = 2 * ws - 1;
    at::Tensor table = r.tensor(p + ".fn.rel_pos_bias.weight", {span * span, kHeads});
    // Token t = (row, col) = (t / ws, t % ws); the offset (dr, dc) between tokens, shifted to be
    // non-negative, indexes the table as dr * span + dc.
    at::Tensor pos = at::arange(ws * ws, at::kLong);
    at::Tensor row = pos.div(ws, "floor"), col = pos.remainder(ws);
    at::Tensor index = (row.unsqueeze(1) - row.unsqueeze(0) + (ws - 1)) * span + (col.unsqueeze(1) - col.unsqueeze(0) + (ws - 1));
    pos_bias = table.index_select(0, index.flatten()).reshape({ws * ws, ws * ws, kHeads}).permute({2, 0, 1}).contiguous();
  }

  at::Tensor operator()(const at::Tensor& x) const {
    at::Tensor tokens = to_windows(x, ws, grid);
    const int64_t n = tokens.size(0), len = tokens.size(1), c = tokens.size(2), dh = c / kHeads;
    at::Tensor normed = infer::layer_norm(tokens, {c}, norm_weight, norm_bias, kTokenNormEps);
    // [n, len, 3c] -> q, k, v as [n, heads, len, dh]; heads are the outer part of each c.
    auto qkv = at::linear(normed, to_qkv).reshape({n, len, 3, kHeads, dh}).permute({2, 0, 3, 1, 4}).unbind(0);
    at::Tensor sim = at::matmul(qkv[0] * (1.0 / std::sqrt(static_cast<double>(dh))), qkv[1].transpose(-2, -1));
    if (pos_bias.defined()) sim = sim + pos_bias;
    at::Tensor out = at::matmul(at::softmax(sim, -1), qkv[2]).permute({0, 2, 1, 3}).reshape({n, len, c});
    return from_windows(at::linear(out, to_out) + tokens, x.sizes(), ws, grid);
  }
  void visit_weights(const TensorVisitor& f) {
    for (at::Tensor* t : {&norm_weight, &norm_bias, &to_qkv, &to_out, &pos_bias})
      if (t->defined()) f(*t);
  }
};

// Channel ("transposed") attention, pre-normalised and residual: per head, a d x d attention
// between feature channels, computed over a set of pixels: the ws^2 pixels of one window
// (local), or the same offset inside every window (grid). q and k are L2-normalised over the
// pixels and the similarity scaled by a learned temperature per head.
struct ChannelAttention {
  ChannelNorm norm;
  at::Tensor temperature;  // [heads, 1, 1]
  Conv2d qkv, qkv_dw, project_out;
  int64_t ws = 8;
  bool grid = false;

  ChannelAttention() = default;
  ChannelAttention(WeightReader& r, const std::string& p, int64_t c, int64_t window, bool grid_)
      : norm(read_norm(r, p + ".norm", c)),
        temperature(r.tensor(p + ".fn.temperature", {kHeads, 1, 1})),
        qkv(read_conv(r, p + ".fn.qkv", c, 3 * c, 1, 1, 0, false)),
        qkv_dw(read_conv(r, p + ".fn.qkv_dwconv", 1, 3 * c, 3, 1, 1, false)),
        project_out(read_conv(r, p + ".fn.project_out", c, c, 1, 1, 0, false)),
        ws(window),
        grid(grid_) {}

  // [B, (heads d), (nh ws), (nw ws)] -> [B, groups, heads, d, pixels per group]
  at::Tensor split(const at::Tensor& t) const {
    const int64_t b = t.size(0), d = t.size(1) / kHeads, nh = t.size(2) / ws, nw = t.size(3) / ws;
    at::Tensor v = t.reshape({b, kHeads, d, nh, ws, nw, ws});
    return grid ? v.permute({0, 4, 6, 1, 2, 3, 5}).reshape({b, ws * ws, kHeads, d, nh * nw})
                : v.permute({0, 3, 5, 1, 2, 4, 6}).reshape({b, nh * nw, kHeads, d, ws * ws});
  }
  at::Tensor merge(const at::Tensor& t, at::IntArrayRef shape) const {
    const int64_t b = shape[0], d = shape[1] / kHeads, nh = shape[2] / ws, nw = shape[3] / ws;
    at::Tensor v = grid ? t.reshape({b, ws, ws, kHeads, d, nh, nw}).permute({0, 3, 4, 5, 1, 6, 2})
                        : t.reshape({b, nh, nw, kHeads, d, ws, ws}).permute({0, 3, 4, 1, 5, 2, 6});
    return v.reshape(shape);
  }

  at::Tensor operator()(const at::Tensor& x) const {
    auto parts = depthwise(qkv_dw, qkv(norm(x))).chunk(3, 1);
    // F.normalize: x / max(|x|, 1e-12) along the pixels.
    auto unit = [](const at::Tensor& t) { return t / t.norm(2, {-1}, true).clamp_min(1e-12); };
    at::Tensor q = unit(split(parts[0])), k = unit(split(parts[1])), v = split(parts[2]);
    at::Tensor attn = at::softmax(at::matmul(q, k.transpose(-2, -1)) * temperature, -1);
    return project_out(merge(at::matmul(attn, v), x.sizes())) + x;
  }
  void visit_weights(const TensorVisitor& f) {
    f(norm.weight);
    f(norm.bias);
    f(temperature);
    for (Conv2d* c : {&qkv, &qkv_dw, &project_out}) visit(*c, f);
  }
};

// Gated depthwise feed-forward, pre-normalised and residual: 1x1 to 2C, depthwise 3x3, then
// GELU(first half) * second half, 1x1 back to C. No biases.
struct GatedFeedForward {
  ChannelNorm norm;
  Conv2d project_in, dw, project_out;

  GatedFeedForward() = default;
  GatedFeedForward(WeightReader& r, const std::string& p, int64_t c)
      : norm(read_norm(r, p + ".norm", c)),
        project_in(read_conv(r, p + ".fn.project_in", c, 2 * c, 1, 1, 0, false)),
        dw(read_conv(r, p + ".fn.dwconv", 1, 2 * c, 3, 1, 1, false)),
        project_out(read_conv(r, p + ".fn.project_out", c, c, 1, 1, 0, false)) {}

  at::Tensor operator()(const at::Tensor& x) const {
    auto halves = depthwise(dw, project_in(norm(x))).chunk(2, 1);
    return project_out(infer::gelu(halves[0]) * halves[1]) + x;
  }
  void visit_weights(const TensorVisitor& f) {
    f(norm.weight);
    f(norm.bias);
    for (Conv2d* c : {&project_in, &dw, &project_out}) visit(*c, f);
  }
};

// One OSA block; the indices are upstream's nn.Sequential positions (the gaps are rearranges).
struct OsaBlock {
  MbConv mbconv;                  // 0
  WindowAttention block_attn;     // 2
  GatedFeedForward ff[4];         // 4, 6, 10, 12
  ChannelAttention channel_attn;  // 5
  WindowAttention grid_attn;      // 8
  ChannelAttention channel_grid;  // 11

  OsaBlock() = default;
  OsaBlock(WeightReader& r, const std::string& p, const OmniShape& s)
      : mbconv(r, p + ".0", s.feat),
        block_attn(r, p + ".2", s.feat, s.window, s.pe, false),
        ff{{r, p + ".4", s.feat}, {r, p + ".6", s.feat}, {r, p + ".10", s.feat}, {r, p + ".12", s.feat}},
        channel_attn(r, p + ".5", s.feat, s.window, false),
        grid_attn(r, p + ".8", s.feat, s.window, s.pe, true),
        channel_grid(r, p + ".11", s.feat, s.window, true) {}

  at::Tensor operator()(const at::Tensor& x) const {
    at::Tensor y = block_attn(mbconv(x));
    y = ff[1](channel_attn(ff[0](y)));
    y = grid_attn(y);
    return ff[3](channel_grid(ff[2](y)));
  }
  void visit_weights(const TensorVisitor& f) {
    mbconv.visit_weights(f);
    block_attn.visit_weights(f);
    grid_attn.visit_weights(f);
    channel_attn.visit_weights(f);
    channel_grid.visit_weights(f);
    for (auto& layer : ff) layer.visit_weights(f);
  }
};

// Enhanced spatial attention: a sigmoid gate per pixel and channel from a coarse view of the
// features (stride-2 conv, 7x7 max pool with stride 3, conv, bilinear back to full size).
struct Esa {
  Conv2d conv1, conv_f, conv2, conv3, conv4;

  Esa() = default;
  Esa(WeightReader& r, const std::string& p, int64_t feat)
      : conv1(read_conv(r, p + ".conv1", feat, std::max<int64_t>(feat / 4, 16), 1)) {
    const int64_t f = conv1.weight.size(0);
    conv_f = read_conv(r, p + ".conv_f", f, f, 1);
    conv2 = read_conv(r, p + ".conv2", f, f, 3, 2, 0);
    conv3 = read_conv(r, p + ".conv3", f, f, 3);
    conv4 = read_conv(r, p + ".conv4", f, feat, 1);
  }

  at::Tensor operator()(const at::Tensor& x) const {
    at::Tensor c1 = conv1(x);
    at::Tensor coarse = conv3(at::max_pool2d(conv2(c1), {7, 7}, {3, 3}));
    coarse = infer::upsample_bilinear2d(coarse, {x.size(2), x.size(3)}, false, c10::nullopt, c10::nullopt);
    return x * at::sigmoid(conv4(coarse + conv_f(c1)));
  }
  void visit_weights(const TensorVisitor& f) {
    for (Conv2d* c : {&conv1, &conv_f, &conv2, &conv3, &conv4}) visit(*c, f);
  }
};

// OSAG: the blocks, a 1x1 conv, the group's residual, then the ESA gate.
struct Osag {
  std::vector<OsaBlock> blocks;
  Conv2d close;
  Esa esa;

  Osag() = default;
  Osag(WeightReader& r, const std::string& p, const OmniShape& s) {
    for (int64_t b = 0; b < s.block_num; ++b) blocks.emplace_back(r, str(p, ".residual_layer.", b, ".layer"), s);
    close = read_conv(r, str(p, ".residual_layer.", s.block_num), s.feat, s.feat, 1, 1, 0, s.bias);
    esa = Esa(r, p + ".esa", s.feat);
  }

  at::Tensor operator()(const at::Tensor& x) const {
    at::Tensor y = x;
    for (const auto& block : blocks) y = block(y);
    return esa(close(y) + x);
  }
  void visit_weights(const TensorVisitor& f) {
    for (auto& b : blocks) b.visit_weights(f);
    visit(close, f);
    esa.visit_weights(f);
  }
};

// Upstream's model files sometimes carry thop profiling counters ("...total_ops",
// "...total_params"); they are not weights.
bool is_profiler_key(const std::string& key) { return key.ends_with("total_ops") || key.ends_with("total_params"); }

weights::StateDict without_profiler_keys(const weights::StateDict& dict) {
  weights::StateDict out;
  for (const auto& [key, t] : dict)
    if (!is_profiler_key(key)) out.emplace(key, t);
  return out;
}

class OmniSr : public NativeModel {
 public:
  // Tile geometry (src/arch/omnisr.cpp): the grid attentions span the whole tile, so context
  // well beyond the convolutions' receptive field pays off. Measured on a grey 192x128 real frame
  // in 64 px tiles, tiled vs whole-frame: 34.0 dB without overlap, 35.8 dB with 32 px, 38.6 dB
  // with 48 px (the declared overlap). Tiles are multiples of the window, which keeps their
  // windows on the frame's window grid.
  OmniSr(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), shape_(shape_of(d)) {
    const auto& s = shape_;
    WeightReader r(dict, source);
    input_ = read_conv(r, "input", s.in, s.feat, 3, 1, -1, s.bias);
    for (int64_t g = 0; g < s.res_num; ++g) groups_.emplace_back(r, str("residual_layer.", g), s);
    output_ = read_conv(r, "output", s.feat, s.feat, 3, 1, -1, s.bias);
    up_ = read_conv(r, "up.0", s.feat, s.out * s.scale * s.scale, 3, 1, -1, s.bias);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    // forward() guarantees multiples of the window; ESA also needs 16 px, so tiny inputs are padded
    // (replicate: reflect cannot pad by more than the side) and the result cropped.
    const int64_t h = input.size(2), w = input.size(3), ws = shape_.window;
    const int64_t min_side = (kEsaMinSide + ws - 1) / ws * ws;
    const int64_t ph = std::max<int64_t>(0, min_side - h), pw = std::max<int64_t>(0, min_side - w);
    at::Tensor x = ph || pw ? infer::replicate_pad2d(input, {0, pw, 0, ph}) : input;

    at::Tensor shallow = input_(x);
    at::Tensor deep = shallow;
    for (const auto& group : groups_) deep = group(deep);
    at::Tensor y = at::pixel_shuffle(up_(output_(deep) + shallow), shape_.scale);
    if (ph || pw) y = y.slice(2, 0, h * shape_.scale).slice(3, 0, w * shape_.scale);
    return y;
  }

  void visit_weights(const TensorVisitor& f) override {
    for (Conv2d* c : {&input_, &output_, &up_}) visit(*c, f);
    for (auto& g : groups_) g.visit_weights(f);
  }

 private:
  OmniShape shape_;
  Conv2d input_, output_, up_;
  std::vector<Osag> groups_;
};

// Pixel-shuffle conv outputs = out_channels * scale^2; out_channels is almost always in_channels
// (else 3, 1 or 4), as upstream's detection assumes.
std::optional<std::pair<int, int>> scale_and_out(int64_t up_channels, int64_t in) {
  for (int64_t out : {in, int64_t{3}, int64_t{1}, int64_t{4}})
    if (auto s = shuffle_factor(up_channels, out)) return std::pair{*s, static_cast<int>(out)};
  return std::nullopt;
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  const std::string first_block = "residual_layer.0.residual_layer.0.layer.";
  if (!dict.count("input.weight") || !dict.count("up.0.weight") || !dict.count(first_block + "0.fn.0.weight"))
    return std::nullopt;
  auto feat = dim_of(dict, "input.weight", 4, 0);
  auto in = dim_of(dict, "input.weight", 4, 1);
  auto up = dim_of(dict, "up.0.weight", 4, 0);
  if (!feat || !in || !up) throw Error(ErrorKind::Model, str(source, ": OmniSR layout: input or up.0 is not a convolution"));
  if (*feat % kHeads != 0)
    throw Error(ErrorKind::Model, str(source, ": OmniSR layout: ", *feat, " features do not split into ", kHeads, " heads"));
  auto so = scale_and_out(*up, *in);
  if (!so) {
    throw Error(ErrorKind::Model, str(source, ": OmniSR layout: up.0 has ", *up,
                                      " outputs, not output channels times a square scale"));
  }

  // Groups and blocks must be numbered 0..n-1; the last residual_layer.g.residual_layer entry of
  // a group is its closing 1x1 conv, so block_num is that index.
  const std::set<int> groups = key_indices(dict, "residual_layer.");
  if (groups.empty() || *groups.begin() != 0 || *groups.rbegin() + 1 != static_cast<int>(groups.size()))
    throw Error(ErrorKind::Model, str(source, ": OmniSR layout: residual_layer groups are not numbered 0..n-1"));
  const std::set<int> layers = key_indices(dict, "residual_layer.0.residual_layer.");
  const int block_num = *layers.rbegin();
  if (block_num < 1 || static_cast<int>(layers.size()) != block_num + 1)
    throw Error(ErrorKind::Model, str(source, ": OmniSR layout: residual_layer.0 has no blocks before its closing conv"));

  // The relative position table has (2 * window - 1)^2 rows. Without it (pe=False) nothing in the
  // weights tells the window size; upstream's default is 8.
  const std::string table_key = first_block + "2.fn.rel_pos_bias.weight";
  int64_t window = 8;
  const bool pe = dict.count(table_key) != 0;
  if (pe) {
    auto rows = dim_of(dict, table_key, 2, 0);
    const int64_t span = rows ? std::llround(std::sqrt(static_cast<double>(*rows))) : 0;
    if (!rows || span * span != *rows || span % 2 == 0) {
      throw Error(ErrorKind::Model, str(source, ": OmniSR layout: ", table_key, " should have (2 * window - 1)^2 rows",
                                        rows ? str(", has ", *rows) : std::string()));
    }
    window = (span + 1) / 2;
  }

  // Checked before they narrow to int: 2^32 + 3 channels would otherwise pass as 3.
  arch::check_shapes("omnisr", {{"in_channels", double(*in)}}, source);
  DetectedArch d;
  d.arch = "omnisr";
  d.scale = so->first;
  d.in_channels = static_cast<int>(*in);
  d.out_channels = so->second;
  d.params = {{"num_feat", double(*feat)},
              {"res_num", double(groups.size())},
              {"block_num", double(block_num)},
              {"window_size", double(window)},
              {"pe", pe ? 1.0 : 0.0},
              {"bias", dict.count("input.bias") ? 1.0 : 0.0}};
  return d;
}

}  // namespace

Architecture omnisr_architecture() {
  return {"omnisr", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            bool profiled = false;
            for (const auto& [key, t] : dict) profiled = profiled || is_profiler_key(key);
            return std::make_unique<OmniSr>(profiled ? without_profiler_keys(dict) : dict, d, source);
          }};
}

}  // namespace framelift::models
