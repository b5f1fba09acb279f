// GMFlow's network, written from upstream's model/gmflow (as GMFSS_union ships it) in its module
// layout; checked against it in tests/models/gmfss_test.cpp (the flow GMFSS feeds its fusion).
#include "models/gmflow.h"

#include <ATen/ATen.h>

#include <array>
#include <cmath>
#include <numbers>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int kScales = 2;
// GMFSS calls GMFlow with its defaults: per scale (1/8, then 1/4) the attention splits, the
// correlation radius (-1: global) and the propagation radius.
constexpr std::array<int64_t, kScales> kSplits = {2, 8}, kCorrRadius = {-1, 4}, kPropRadius = {-1, 1};
constexpr int64_t kMaxWidth = 4096;
constexpr double kNormEps = 1e-5;

[[noreturn]] void layout_error(const std::string& source, const std::string& problem) {
  throw Error(ErrorKind::Model, str(source, ": GMFlow layout: ", problem));
}

struct Linear {
  at::Tensor weight, bias;
  at::Tensor operator()(const at::Tensor& x) const { return at::linear(x, weight, bias); }
  void visit(const TensorVisitor& f) {
    f(weight);
    if (bias.defined()) f(bias);
  }
};

Linear read_linear(WeightReader& r, const std::string& p, int64_t in, int64_t out, bool bias) {
  return {r.tensor(p + ".weight", {out, in}), bias ? r.tensor(p + ".bias", {out}) : at::Tensor()};
}

struct LayerNorm {
  at::Tensor weight, bias;
  at::Tensor operator()(const at::Tensor& x) const { return at::layer_norm(x, {weight.size(0)}, weight, bias, kNormEps); }
  void visit(const TensorVisitor& f) {
    f(weight);
    f(bias);
  }
};

LayerNorm read_layer_norm(WeightReader& r, const std::string& p, int64_t c) { return {r.tensor(p + ".weight", {c}), r.tensor(p + ".bias", {c})}; }

// nn.InstanceNorm2d without affine weights, in fp32 whatever the network runs in.
at::Tensor instance_norm(const at::Tensor& x) {
  const at::Tensor f = x.to(at::kFloat), mean = f.mean({2, 3}, true);
  const at::Tensor centred = f - mean;
  return (centred * at::rsqrt(centred.pow(2).mean({2, 3}, true) + kNormEps)).to(x.scalar_type());
}

struct ResidualBlock {
  Conv2d conv1, conv2;
  std::optional<Conv2d> downsample;  // a 1x1 (with bias) and a norm where the stride or width changes

  ResidualBlock(WeightReader& r, const std::string& p, int64_t in, int64_t out, int64_t stride) {
    conv1 = read_conv(r, p + ".conv1", in, out, 3, stride, 1, false);
    conv2 = read_conv(r, p + ".conv2", out, out, 3, 1, 1, false);
    if (stride != 1 || in != out) downsample = read_conv(r, p + ".downsample.0", in, out, 1, stride, 0, true);
  }
  at::Tensor operator()(const at::Tensor& x) const {
    const at::Tensor y = at::relu(instance_norm(conv2(at::relu(instance_norm(conv1(x))))));
    return at::relu((downsample ? instance_norm((*downsample)(x)) : x) + y);
  }
  void visit(const TensorVisitor& f) {
    models::visit(conv1, f);
    models::visit(conv2, f);
    if (downsample) models::visit(*downsample, f);
  }
};

// One attention layer: single-head attention of source onto target (itself for self-attention),
// projected and normalised, then (cross-attention only) an FFN of [source, message].
struct AttentionLayer {
  Linear q, k, v, merge, mlp_in, mlp_out;
  LayerNorm norm1, norm2;
  bool ffn = false;

  AttentionLayer(WeightReader& r, const std::string& p, int64_t c, int64_t hidden, bool with_ffn) : ffn(with_ffn) {
    q = read_linear(r, p + ".q_proj", c, c, false);
    k = read_linear(r, p + ".k_proj", c, c, false);
    v = read_linear(r, p + ".v_proj", c, c, false);
    merge = read_linear(r, p + ".merge", c, c, false);
    norm1 = read_layer_norm(r, p + ".norm1", c);
    if (ffn) {
      mlp_in = read_linear(r, p + ".mlp.0", 2 * c, hidden, false);
      mlp_out = read_linear(r, p + ".mlp.2", hidden, c, false);
      norm2 = read_layer_norm(r, p + ".norm2", c);
    }
  }
  void visit(const TensorVisitor& f) {
    for (Linear* l : {&q, &k, &v, &merge}) l->visit(f);
    norm1.visit(f);
    if (ffn) {
      mlp_in.visit(f);
      mlp_out.visit(f);
      norm2.visit(f);
    }
  }
};

// [B, H, W, C] cut into splits x splits windows: [B * splits^2, window pixels, C], batch-major.
at::Tensor to_windows(const at::Tensor& x, int64_t s) {
  const int64_t b = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3);
  return x.view({b, s, h / s, s, w / s, c}).permute({0, 1, 3, 2, 4, 5}).reshape({b * s * s, (h / s) * (w / s), c});
}

at::Tensor from_windows(const at::Tensor& x, int64_t b, int64_t h, int64_t w, int64_t s) {
  const int64_t c = x.size(2);
  return x.view({b, s, s, h / s, w / s, c}).permute({0, 1, 3, 2, 4, 5}).reshape({b, h, w, c});
}

// Python's slice(start, stop) of n items as [begin, end): negative bounds count from the end, and
// a bound of 0 (a shift of 0, written -0) is 0.
std::pair<int64_t, int64_t> py_slice(int64_t n, int64_t start, std::optional<int64_t> stop) {
  const auto resolve = [n](int64_t i) { return i < 0 ? std::max<int64_t>(0, i + n) : std::min(i, n); };
  return {resolve(start), stop ? resolve(*stop) : n};
}

// Shifted windows' mask (Swin's): -100 between pixels that the roll brought together from
// different regions of the frame, built from the same slices upstream uses.
at::Tensor shift_mask(int64_t h, int64_t w, int64_t s, const at::TensorOptions& opts) {
  const int64_t wh = h / s, ww = w / s;
  const std::array<std::pair<int64_t, int64_t>, 3> rows = {py_slice(h, 0, -wh), py_slice(h, -wh, -(wh / 2)), py_slice(h, -(wh / 2), std::nullopt)};
  const std::array<std::pair<int64_t, int64_t>, 3> cols = {py_slice(w, 0, -ww), py_slice(w, -ww, -(ww / 2)), py_slice(w, -(ww / 2), std::nullopt)};
  at::Tensor regions = at::zeros({1, h, w, 1}, opts);
  double count = 0;
  for (const auto& [r0, r1] : rows)
    for (const auto& [c0, c1] : cols) {
      if (r1 > r0 && c1 > c0) regions.narrow(1, r0, r1 - r0).narrow(2, c0, c1 - c0).fill_(count);
      ++count;
    }
  const at::Tensor win = to_windows(regions, s).squeeze(2);  // [s^2, window pixels]
  const at::Tensor differs = win.unsqueeze(1) - win.unsqueeze(2);
  return at::where(differs != 0, at::full({}, -100.0, opts), at::zeros({}, opts));
}

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask) {
  at::Tensor scores = at::matmul(q, k.transpose(1, 2)) / std::sqrt(double(q.size(2)));
  if (mask.defined()) scores = scores + mask.repeat({scores.size(0) / mask.size(0), 1, 1});
  return at::matmul(at::softmax(scores, -1), v);
}

struct Geometry {
  int64_t b, h, w, splits;
  bool shift;
  at::Tensor mask;  // for shifted layers; undefined where there is one window
};

at::Tensor layer_forward(const AttentionLayer& l, const at::Tensor& source, const at::Tensor& target, const Geometry& g) {
  const at::Tensor q = l.q(source), k = l.k(target), v = l.v(target);
  const int64_t c = q.size(2);
  at::Tensor message;
  if (g.splits > 1) {
    const int64_t sh = g.shift ? (g.h / g.splits) / 2 : 0, sw = g.shift ? (g.w / g.splits) / 2 : 0;
    const auto windows = [&](const at::Tensor& x) {
      at::Tensor y = x.view({g.b, g.h, g.w, c});
      if (g.shift) y = at::roll(y, {-sh, -sw}, {1, 2});
      return to_windows(y, g.splits);
    };
    at::Tensor out = from_windows(attention(windows(q), windows(k), windows(v), g.shift ? g.mask.to(q.scalar_type()) : at::Tensor()),
                                  g.b, g.h, g.w, g.splits);
    if (g.shift) out = at::roll(out, {sh, sw}, {1, 2});
    message = out.reshape({g.b, g.h * g.w, c});
  } else {
    message = attention(q, k, v, at::Tensor());
  }
  message = l.norm1(l.merge(message));
  if (l.ffn) message = l.norm2(l.mlp_out(at::gelu(l.mlp_in(at::cat({source, message}, -1)))));
  return source + message;
}

// DETR's sine position encoding of one window [C, h, w], fp32: y in the first C/2 channels, x in
// the rest, sines on even channels and cosines on odd ones.
at::Tensor position_encoding(int64_t c, int64_t h, int64_t w, const at::TensorOptions& opts) {
  const int64_t npf = c / 2;
  const double two_pi = 2 * std::numbers::pi;
  const at::Tensor dim_t = at::pow(10000.0, 2 * at::floor(at::arange(npf, opts) / 2) / double(npf)).view({npf, 1, 1});
  const at::Tensor even = (at::arange(npf, opts.dtype(at::kLong)) % 2 == 0).view({npf, 1, 1});
  const auto encode = [&](int64_t n) {
    const at::Tensor embed = at::arange(1, n + 1, opts) / (double(n) + 1e-6) * two_pi;
    const at::Tensor x = embed.view({1, n}) / dim_t.view({npf, 1});
    return at::where(even.view({npf, 1}), at::sin(x), at::cos(x));  // [npf, n]
  };
  return at::cat({encode(h).view({npf, h, 1}).expand({npf, h, w}), encode(w).view({npf, 1, w}).expand({npf, h, w})}, 0);
}

at::Tensor coords(int64_t h, int64_t w, const at::TensorOptions& opts) {  // [1, 2, h, w]: x, y
  return at::stack({at::arange(w, opts).view({1, w}).expand({h, w}), at::arange(h, opts).view({h, 1}).expand({h, w})}, 0).unsqueeze(0);
}

at::Tensor global_matching(const at::Tensor& f0, const at::Tensor& f1) {
  const int64_t b = f0.size(0), c = f0.size(1), h = f0.size(2), w = f0.size(3);
  const at::Tensor corr = at::matmul(f0.view({b, c, h * w}).transpose(1, 2), f1.view({b, c, h * w})) / std::sqrt(double(c));
  const at::Tensor grid = coords(h, w, f0.options());
  const at::Tensor target = at::matmul(at::softmax(corr, -1), grid.view({1, 2, h * w}).transpose(1, 2).expand({b, h * w, 2}));
  return target.view({b, h, w, 2}).permute({0, 3, 1, 2}) - grid;
}

// Correlation with the (2r+1)^2 pixels around each one (zero outside the frame, and left out of
// the softmax there), the flow the softmax-weighted offset.
at::Tensor local_matching(const at::Tensor& f0, const at::Tensor& f1, int64_t r) {
  const int64_t b = f0.size(0), c = f0.size(1), h = f0.size(2), w = f0.size(3);
  const at::Tensor padded = at::constant_pad_nd(f1, {r, r, r, r}, 0);
  const auto opts = f0.options();
  const at::Tensor grid = coords(h, w, opts);
  const at::Tensor x = grid.select(1, 0), y = grid.select(1, 1);  // [1, h, w]
  std::vector<at::Tensor> corr, sx, sy;
  for (int64_t dy = -r; dy <= r; ++dy)
    for (int64_t dx = -r; dx <= r; ++dx) {
      const at::Tensor shifted = padded.narrow(2, r + dy, h).narrow(3, r + dx, w);
      const at::Tensor px = x + double(dx), py = y + double(dy);
      const at::Tensor valid = (px >= 0).logical_and(px < w).logical_and(py >= 0).logical_and(py < h);
      const at::Tensor dot = (f0 * shifted).sum(1) / std::sqrt(double(c));
      corr.push_back(at::where(valid, dot, at::full({}, -1e9, opts)));
      sx.push_back(px.expand({b, h, w}));
      sy.push_back(py.expand({b, h, w}));
    }
  const at::Tensor prob = at::softmax(at::stack(corr, 1), 1);
  return at::stack({(prob * at::stack(sx, 1)).sum(1), (prob * at::stack(sy, 1)).sum(1)}, 1) - grid;
}

at::Tensor tokens(const at::Tensor& x) { return x.flatten(2).transpose(1, 2); }  // [B, C, H, W] -> [B, HW, C]

}  // namespace

at::Tensor flow_warp(const at::Tensor& x, const at::Tensor& flow) {
  const int64_t h = x.size(2), w = x.size(3);
  const at::Tensor pos = coords(h, w, flow.options().dtype(at::kFloat)) + flow.to(at::kFloat);
  const at::Tensor gx = pos.select(1, 0) * 2 / double(w - 1) - 1, gy = pos.select(1, 1) * 2 / double(h - 1) - 1;
  return at::grid_sampler(x.to(at::kFloat), at::stack({gx, gy}, -1), 0, 0, true);
}

struct Gmflow::Impl {
  GmflowShape s;
  Conv2d stem;
  std::vector<ResidualBlock> blocks;  // layer1..3, two each
  Conv2d head, trident_fine, trident_coarse;  // the trident's one weight at strides 1 and 2
  std::vector<std::array<AttentionLayer, 2>> layers;  // self, cross + FFN
  Linear prop_q, prop_k;
  Conv2d up0, up1;
  c10::ScalarType dtype = at::kFloat;

  std::vector<at::Tensor> backbone(const at::Tensor& x) const {
    at::Tensor y = at::relu(instance_norm(stem(x)));
    for (const ResidualBlock& blk : blocks) y = blk(y);
    y = head(y);
    return {trident_coarse(y), trident_fine(y)};  // 1/8, 1/4
  }

  std::pair<at::Tensor, at::Tensor> transformer(const at::Tensor& f0, const at::Tensor& f1, int64_t splits) const {
    const int64_t b = f0.size(0), c = f0.size(1), h = f0.size(2), w = f0.size(3);
    Geometry g{2 * b, h, w, splits, false, {}};
    if (splits > 1) g.mask = shift_mask(h, w, splits, f0.options().dtype(at::kFloat));
    at::Tensor a = at::cat({tokens(f0), tokens(f1)}, 0), other = at::cat({tokens(f1), tokens(f0)}, 0);
    for (size_t i = 0; i < layers.size(); ++i) {
      g.shift = splits > 1 && i % 2 == 1;
      a = layer_forward(layers[i][1], layer_forward(layers[i][0], a, a, g), other, g);
      const auto halves = a.chunk(2, 0);
      other = at::cat({halves[1], halves[0]}, 0);
    }
    const auto halves = a.chunk(2, 0);
    const auto back = [&](const at::Tensor& t) { return t.reshape({b, h, w, c}).permute({0, 3, 1, 2}).contiguous(); };
    return {back(halves[0]), back(halves[1])};
  }

  // Flow propagation: the flow averaged by feature self-attention, over the whole frame or
  // (radius r) the (2r+1)^2 neighbours (zero-padded keys and flows beyond the border).
  at::Tensor propagate(const at::Tensor& f0, const at::Tensor& flow, int64_t r) const {
    const int64_t b = f0.size(0), c = f0.size(1), h = f0.size(2), w = f0.size(3);
    const at::Tensor q = prop_q(tokens(f0));
    if (r <= 0) {
      const at::Tensor k = prop_k(q).to(at::kFloat);
      const at::Tensor scores = at::matmul(q.to(at::kFloat), k.transpose(1, 2)) / std::sqrt(double(c));
      return at::matmul(at::softmax(scores, -1), tokens(flow)).view({b, h, w, 2}).permute({0, 3, 1, 2});
    }
    const at::Tensor k = at::constant_pad_nd(prop_k(tokens(f0)).to(at::kFloat).transpose(1, 2).reshape({b, c, h, w}), {r, r, r, r}, 0);
    const at::Tensor qf = q.to(at::kFloat).transpose(1, 2).reshape({b, c, h, w});
    const at::Tensor fp = at::constant_pad_nd(flow, {r, r, r, r}, 0);
    std::vector<at::Tensor> scores, flows;
    for (int64_t dy = 0; dy <= 2 * r; ++dy)
      for (int64_t dx = 0; dx <= 2 * r; ++dx) {
        scores.push_back((qf * k.narrow(2, dy, h).narrow(3, dx, w)).sum(1) / std::sqrt(double(c)));
        flows.push_back(fp.narrow(2, dy, h).narrow(3, dx, w));
      }
    const at::Tensor prob = at::softmax(at::stack(scores, 1), 1).unsqueeze(1);  // [b, 1, K, h, w]
    return (prob * at::stack(flows, 2)).sum(2);
  }

  // Convex upsampling: each fine pixel a softmax-weighted mix of the 3x3 coarse flows around it.
  at::Tensor upsample(const at::Tensor& flow, const at::Tensor& feature) const {
    const int64_t b = flow.size(0), h = flow.size(2), w = flow.size(3), k = s.upsample_factor;
    const at::Tensor mask = at::softmax(up1(at::relu(up0(at::cat({flow.to(dtype), feature}, 1)))).to(at::kFloat).view({b, 1, 9, k, k, h, w}), 2);
    const at::Tensor patches = at::im2col(flow * double(k), {3, 3}, {1, 1}, {1, 1}, {1, 1}).view({b, 2, 9, 1, 1, h, w});
    return (mask * patches).sum(2).permute({0, 1, 4, 2, 5, 3}).reshape({b, 2, k * h, k * w});
  }

  at::Tensor forward(const at::Tensor& a, const at::Tensor& b) const {
    const auto opts = a.options().dtype(at::kFloat);
    const at::Tensor mean = at::tensor({0.485, 0.456, 0.406}, opts).view({1, 3, 1, 1});
    const at::Tensor std = at::tensor({0.229, 0.224, 0.225}, opts).view({1, 3, 1, 1});
    const int64_t n = a.size(0);
    const at::Tensor x = ((at::cat({a, b}, 0).to(at::kFloat) - mean) / std).to(dtype);
    const std::vector<at::Tensor> features = backbone(x);
    at::Tensor flow, feature0;
    for (int i = 0; i < kScales; ++i) {
      feature0 = features[size_t(i)].narrow(0, 0, n);
      at::Tensor feature1 = features[size_t(i)].narrow(0, n, n);
      if (flow.defined()) {
        flow = at::upsample_bilinear2d(flow, {2 * flow.size(2), 2 * flow.size(3)}, true) * 2.0;
        feature1 = flow_warp(feature1, flow).to(dtype);
      }
      const int64_t splits = kSplits[size_t(i)], h = feature0.size(2), w = feature0.size(3);
      if (h % splits || w % splits) throw Error(ErrorKind::Internal, str("GMFlow features ", w, "x", h, " do not split in ", splits));
      const at::Tensor pos = position_encoding(s.features, h / splits, w / splits, opts).repeat({1, splits, splits}).to(dtype);
      std::tie(feature0, feature1) = transformer(feature0 + pos, feature1 + pos, splits);
      const at::Tensor f0 = feature0.to(at::kFloat), f1 = feature1.to(at::kFloat);
      const at::Tensor pred = kCorrRadius[size_t(i)] < 0 ? global_matching(f0, f1) : local_matching(f0, f1, kCorrRadius[size_t(i)]);
      flow = flow.defined() ? flow + pred : pred;
      flow = propagate(feature0, flow, kPropRadius[size_t(i)]);
    }
    return upsample(flow, feature0);
  }

  void visit(const TensorVisitor& f) {
    for (Conv2d* c : {&stem, &head, &trident_fine, &trident_coarse, &up0, &up1}) models::visit(*c, f);
    for (ResidualBlock& blk : blocks) blk.visit(f);
    for (auto& pair : layers)
      for (AttentionLayer& l : pair) l.visit(f);
    prop_q.visit(f);
    prop_k.visit(f);
  }
};

std::optional<GmflowShape> detect_gmflow(const weights::StateDict& dict, const std::string& p, const std::string& source) {
  if (!dict.count(p + "backbone.conv1.weight")) return std::nullopt;
  GmflowShape s;
  const auto width = [&](const std::string& key, int64_t rank) {
    const auto d = dim_of(dict, p + key, rank, 0);
    if (!d || *d < 1 || *d > kMaxWidth) layout_error(source, str(p, key, " is missing or of an odd width"));
    return *d;
  };
  s.dims[0] = width("backbone.conv1.weight", 4);
  s.dims[1] = width("backbone.layer2.0.conv1.weight", 4);
  s.dims[2] = width("backbone.layer3.0.conv1.weight", 4);
  s.features = width("backbone.conv2.weight", 4);
  if (s.features % 2) layout_error(source, str(s.features, " features (the position encoding needs an even width)"));
  const std::set<int> layers = key_indices(dict, p + "transformer.layers.");
  s.layers = int(layers.size());
  if (s.layers < 1 || s.layers > 64 || *layers.rbegin() != s.layers - 1) layout_error(source, str(s.layers, " transformer layers"));
  s.ffn = width("transformer.layers.0.cross_attn_ffn.mlp.0.weight", 2);
  s.upsampler = width("upsampler.0.weight", 4);
  const int64_t mask = width("upsampler.2.weight", 4), factor = int64_t(std::lround(std::sqrt(double(mask) / 9)));
  if (factor < 1 || factor * factor * 9 != mask) layout_error(source, str("an upsampler of ", mask, " channels (9 k^2 expected)"));
  s.upsample_factor = factor;
  return s;
}

Gmflow::Gmflow(WeightReader& r, const std::string& p, const GmflowShape& s) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.s = s;
  m.stem = read_conv(r, p + "backbone.conv1", 3, s.dims[0], 7, 2, 3, false);
  int64_t in = s.dims[0];
  const int64_t strides[3] = {1, 2, 1};
  for (int l = 0; l < 3; ++l) {
    m.blocks.emplace_back(r, str(p, "backbone.layer", l + 1, ".0"), in, s.dims[l], strides[l]);
    m.blocks.emplace_back(r, str(p, "backbone.layer", l + 1, ".1"), s.dims[l], s.dims[l], 1);
    in = s.dims[l];
  }
  m.head = read_conv(r, p + "backbone.conv2", s.dims[2], s.features, 1, 1, 0, true);
  const at::Tensor trident = r.tensor(p + "backbone.trident_conv.weight", {s.features, s.features, 3, 3});
  m.trident_fine = Conv2d{trident, {}, 1, 1, 1};
  m.trident_coarse = Conv2d{trident, {}, 2, 1, 1};
  for (int i = 0; i < s.layers; ++i) {
    const std::string lp = str(p, "transformer.layers.", i);
    m.layers.push_back({AttentionLayer(r, lp + ".self_attn", s.features, s.ffn, false),
                        AttentionLayer(r, lp + ".cross_attn_ffn", s.features, s.ffn, true)});
  }
  m.prop_q = read_linear(r, p + "feature_flow_attn.q_proj", s.features, s.features, true);
  m.prop_k = read_linear(r, p + "feature_flow_attn.k_proj", s.features, s.features, true);
  m.up0 = read_conv(r, p + "upsampler.0", 2 + s.features, s.upsampler, 3, 1, 1, true);
  m.up1 = read_conv(r, p + "upsampler.2", s.upsampler, s.upsample_factor * s.upsample_factor * 9, 1, 1, 0, true);
}

Gmflow::~Gmflow() = default;
Gmflow::Gmflow(Gmflow&&) noexcept = default;

at::Tensor Gmflow::operator()(const at::Tensor& a, const at::Tensor& b) const { return impl_->forward(a, b); }

void Gmflow::to(c10::Device device, c10::ScalarType dtype) {
  impl_->visit([&](at::Tensor& t) { t = t.to(device, dtype); });
  impl_->dtype = dtype;
}

}  // namespace framelift::models
