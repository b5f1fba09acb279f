// GMFSS union's networks, written from upstream's model/ (gmfss.py's reuse and inference,
// MetricNet.py, FusionNet.py, IFNet_HDv3.py) in its module layout; the numbers checked against
// upstream are in tests/models/gmfss_test.cpp.
#include "models/gmfss.h"

#include <ATen/ATen.h>

#include <cmath>
#include <set>

#include "arch/declaration.h"
#include "infer/tiler.h"
#include "models/backward_warp.h"
#include "models/interpolator_networks.h"
#include "models/native_model.h"
#include "models/softsplat.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/load_weights.h"

namespace framelift::models {
namespace {

constexpr int kMultiple = 64;  // GMFlow at half size: its 1/8 scale split in 2, its 1/4 in 8
constexpr int kResConvs = 8;
constexpr double kSlope = 0.2;
constexpr int64_t kMaxWidth = 4096;

[[noreturn]] void layout_error(const std::string& source, const std::string& problem) {
  throw Error(ErrorKind::Model, str(source, ": GMFSS layout: ", problem));
}

at::Tensor prelu_act(const at::Tensor& x, const at::Tensor& w) { return at::prelu(x, w); }

// ---- RIFE 4.6's IFNet (IFNet_HDv3.py), at whatever widths the blocks hold.

struct IfBlock {
  Conv2d conv0a, conv0b;
  std::array<Conv2d, kResConvs> res;
  std::array<at::Tensor, kResConvs> beta;
  ConvTranspose2d last;

  IfBlock(WeightReader& r, const std::string& p, int64_t in, int64_t c) {
    conv0a = read_conv(r, p + ".conv0.0.0", in, c / 2, 3, 2, 1);
    conv0b = read_conv(r, p + ".conv0.1.0", c / 2, c, 3, 2, 1);
    for (int j = 0; j < kResConvs; ++j) {
      res[size_t(j)] = read_conv(r, str(p, ".convblock.", j, ".conv"), c, c, 3);
      beta[size_t(j)] = r.tensor(str(p, ".convblock.", j, ".beta"), {1, c, 1, 1});
    }
    last = read_deconv(r, p + ".lastconv.0", c, 4 * 6, 4, 2, 1);
  }
  // The flow update (4) and mask (1) at x's size.
  std::pair<at::Tensor, at::Tensor> operator()(at::Tensor x, const at::Tensor& flow, double scale) const {
    x = resize_bilinear(x, 1.0 / scale);
    if (flow.defined()) x = at::cat({x, resize_bilinear(flow, 1.0 / scale) * (1.0 / scale)}, 1);
    at::Tensor feat = at::leaky_relu(conv0b(at::leaky_relu(conv0a(x), kSlope)), kSlope);
    for (int j = 0; j < kResConvs; ++j) feat = at::leaky_relu(res[size_t(j)](feat) * beta[size_t(j)] + feat, kSlope);
    const at::Tensor tmp = resize_bilinear(at::pixel_shuffle(last(feat), 2), scale);
    return {tmp.narrow(1, 0, 4) * scale, tmp.narrow(1, 4, 1)};
  }
  void visit(const TensorVisitor& f) {
    models::visit(conv0a, f);
    models::visit(conv0b, f);
    for (Conv2d& c : res) models::visit(c, f);
    for (at::Tensor& b : beta) f(b);
    models::visit(last, f);
  }
};

// ---- AnimeInterp's blocks: PReLU, conv, PReLU, conv (after a 2x bilinear upsampling in the
// upsampling blocks, whose Sequential starts with it: index 0 holds no weights there).

struct PreluBlock {
  at::Tensor a1, a2;
  Conv2d c1, c2;
  bool upsample = false;

  PreluBlock() = default;
  PreluBlock(WeightReader& r, const std::string& p, int64_t in, int64_t out, int64_t stride, bool up) : upsample(up) {
    const int o = up ? 1 : 0;
    a1 = r.tensor(str(p, ".", o, ".weight"), {1});
    c1 = read_conv(r, str(p, ".", o + 1), in, out, 3, stride, 1);
    a2 = r.tensor(str(p, ".", o + 2, ".weight"), {1});
    c2 = read_conv(r, str(p, ".", o + 3), out, out, 3, 1, 1);
  }
  at::Tensor operator()(at::Tensor x) const {
    if (upsample) x = at::upsample_bilinear2d(x, {2 * x.size(2), 2 * x.size(3)}, false);
    return c2(prelu_act(c1(prelu_act(x, a1)), a2));
  }
  void visit(const TensorVisitor& f) {
    f(a1);
    f(a2);
    models::visit(c1, f);
    models::visit(c2, f);
  }
};

struct GridNet {
  PreluBlock head, head1, head4, head2, head3;
  PreluBlock r01, r04, r05, r11, r14, r15, r21, r24, r25;
  PreluBlock d10, d20, d11, d21, u04, u14, u05, u15;
  Conv2d tail_in, tail_up, tail_out;
  at::Tensor tail_act;

  GridNet(WeightReader& r, const std::string& p, const GmfssShape& s) {
    const auto& g = s.grid;
    const auto& f = s.features;
    const auto res = [&](const char* name, int64_t in, int64_t out) { return PreluBlock(r, p + name, in, out, 1, false); };
    head = res("residual_model_head", 6, g[0]);
    head1 = res("residual_model_head1", 2 * f[0], g[0]);
    head4 = res("residual_model_head4", 3, g[0]);
    head2 = res("residual_model_head2", 2 * f[1], g[1]);
    head3 = res("residual_model_head3", 2 * f[2], g[2]);
    r01 = res("residual_model_01", g[0], g[0]);
    r04 = res("residual_model_04", g[0], g[0]);
    r05 = res("residual_model_05", g[0], g[0]);
    r11 = res("residual_model_11", g[1], g[1]);
    r14 = res("residual_model_14", g[1], g[1]);
    r15 = res("residual_model_15", g[1], g[1]);
    r21 = res("residual_model_21", g[2], g[2]);
    r24 = res("residual_model_24", g[2], g[2]);
    r25 = res("residual_model_25", g[2], g[2]);
    d10 = PreluBlock(r, p + "downsample_model_10", g[0], g[1], 2, false);
    d20 = PreluBlock(r, p + "downsample_model_20", g[1], g[2], 2, false);
    d11 = PreluBlock(r, p + "downsample_model_11", g[0], g[1], 2, false);
    d21 = PreluBlock(r, p + "downsample_model_21", g[1], g[2], 2, false);
    u04 = PreluBlock(r, p + "upsample_model_04", g[1], g[0], 1, true);
    u14 = PreluBlock(r, p + "upsample_model_14", g[2], g[1], 1, true);
    u05 = PreluBlock(r, p + "upsample_model_05", g[1], g[0], 1, true);
    u15 = PreluBlock(r, p + "upsample_model_15", g[2], g[1], 1, true);
    tail_in = read_conv(r, p + "residual_model_tail.conv_before_upsample.0", g[0], g[0], 3);
    tail_act = r.tensor(p + "residual_model_tail.conv_before_upsample.1.weight", {1});
    tail_up = read_conv(r, p + "residual_model_tail.upsample.0", g[0], 4 * g[0], 3);
    tail_out = read_conv(r, p + "residual_model_tail.conv_last", g[0], 3, 3);
  }

  // x: both splatted frames (6), x1..x3 both splatted features per scale, x4 IFNet's frame.
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& x1, const at::Tensor& x2, const at::Tensor& x3, const at::Tensor& x4) const {
    const at::Tensor X00 = head(x) + head1(x1) + head4(x4);
    const at::Tensor X01 = r01(X00) + X00;
    const at::Tensor X10 = d10(X00) + head2(x2);
    const at::Tensor X20 = d20(X10) + head3(x3);
    const at::Tensor X11 = r11(X10) + X10 + d11(X01);
    const at::Tensor X21 = r21(X20) + X20 + d21(X11);
    const at::Tensor X24 = r24(X21) + X21;
    const at::Tensor X25 = r25(X24) + X24;
    const at::Tensor X14 = u14(X24) + (r14(X11) + X11);
    const at::Tensor X04 = u04(X14) + (r04(X01) + X01);
    const at::Tensor X15 = u15(X25) + (r15(X14) + X14);
    const at::Tensor X05 = u05(X15) + (r05(X04) + X04);
    return tail_out(at::pixel_shuffle(tail_up(prelu_act(tail_in(X05), tail_act)), 2));
  }

  void visit(const TensorVisitor& f) {
    for (PreluBlock* b : {&head, &head1, &head4, &head2, &head3, &r01, &r04, &r05, &r11, &r14, &r15, &r21, &r24, &r25, &d10, &d20,
                          &d11, &d21, &u04, &u14, &u05, &u15})
      b->visit(f);
    for (Conv2d* c : {&tail_in, &tail_up, &tail_out}) models::visit(*c, f);
    f(tail_act);
  }
};

// MetricNet.py's backwarp: grid_sample without align_corners at pixel centres plus the flow
// scaled by 2 / (size - 1) (so a flow moves W / (W - 1) pixels: upstream's arithmetic), zeros
// outside.
at::Tensor metric_backwarp(const at::Tensor& x, const at::Tensor& flow) {
  const int64_t h = flow.size(2), w = flow.size(3);
  const auto opts = flow.options().dtype(at::kFloat);
  const at::Tensor gx = at::linspace(-1.0 + 1.0 / double(w), 1.0 - 1.0 / double(w), w, opts).view({1, 1, w}) +
                        flow.select(1, 0) / ((double(x.size(3)) - 1.0) / 2.0);
  const at::Tensor gy = at::linspace(-1.0 + 1.0 / double(h), 1.0 - 1.0 / double(h), h, opts).view({1, h, 1}) +
                        flow.select(1, 1) / ((double(x.size(2)) - 1.0) / 2.0);
  return at::grid_sampler(x.to(at::kFloat), at::stack({gx, gy}, -1), 0, 0, false);
}

// UnFlow's forward-backward check (alpha 0.01, beta 0.5): 1 where the flow and the other one
// warped back to it do not cancel.
at::Tensor occlusion(const at::Tensor& fwd, const at::Tensor& bwd) {
  const at::Tensor magnitude = at::linalg_vector_norm(fwd, 2, {1}) + at::linalg_vector_norm(bwd, 2, {1});
  const at::Tensor diff = at::linalg_vector_norm(fwd + flow_warp(bwd, fwd), 2, {1});
  return (diff > magnitude * 0.01 + 0.5).to(at::kFloat).unsqueeze(1);
}

// What depends only on the pair (gmfss.py's reuse): flows both ways, splatting metrics, features.
struct PairState {
  at::Tensor a, b;  // the padded frames it was computed for (copies)
  double scale = 0;
  at::Tensor half0, half1, flow01, flow10, metric0, metric1;
  std::array<at::Tensor, 3> feat0, feat1;
};

class Gmfss : public FrameInterpolator {
 public:
  Gmfss(WeightReader& r, const GmfssShape& s) : s_(s), gmflow_(r, "flownet.", s.flow), grid_(r, "fusionnet.synnet.", s) {
    for (int i = 0; i < 4; ++i) ifnet_.emplace_back(r, str("ifnet.block", i), i == 0 ? 7 : 12, s.ifnet[size_t(i)]);
    metric_[0] = read_conv(r, "metricnet.metric_net.0", 14, s.metric, 3);
    metric_act_[0] = r.tensor("metricnet.metric_net.1.weight", {1});
    metric_[1] = read_conv(r, "metricnet.metric_net.2", s.metric, s.metric, 3);
    metric_act_[1] = r.tensor("metricnet.metric_net.3.weight", {1});
    metric_[2] = read_conv(r, "metricnet.metric_net.4", s.metric, 2, 3);
    int64_t in = 3;
    for (int k = 0; k < 6; ++k) {
      const int64_t out = s.features[size_t(k / 2)];
      extract_[size_t(k)] = read_conv(r, str("fusionnet.feat_ext.conv", k + 1), in, out, 3, k % 2 == 0 ? 2 : 1, 1);
      extract_act_[size_t(k)] = r.tensor(str("fusionnet.feat_ext.prelu", k + 1, ".weight"), {1});
      in = out;
    }
    info_ = {"gmfss", s.variant(), kMultiple};
  }

  const InterpolatorInfo& info() const override { return info_; }

  at::Tensor interpolate(const at::Tensor& a, const at::Tensor& b, double t, double scale) override {
    // Upstream's scales: GMFlow on the half-size frames resized by scale (0.5 for 4K).
    if (!(scale == 0.25 || scale == 0.5 || scale == 1 || scale == 2 || scale == 4))
      throw Error(ErrorKind::Usage, str("GMFSS flow scale must be 0.25, 0.5, 1, 2 or 4, got ", scale));
    at::NoGradGuard no_grad;
    const int64_t h = a.size(2), w = a.size(3);
    const int multiple = std::max(kMultiple, int(kMultiple / scale));
    const at::Tensor x0 = infer::pad_to_multiple(a.to(device_, dtype_), multiple);
    const at::Tensor x1 = infer::pad_to_multiple(b.to(device_, dtype_), multiple);
    const PairState& p = pair(x0, x1, scale);
    return fuse(p, ifnet(p.half0, p.half1, t), t).narrow(2, 0, h).narrow(3, 0, w).to(a.scalar_type());
  }

  void to(c10::Device device, c10::ScalarType dtype) override {
    const TensorVisitor convert = [&](at::Tensor& x) { x = x.to(device, dtype); };
    gmflow_.to(device, dtype);
    for (IfBlock& blk : ifnet_) blk.visit(convert);
    for (Conv2d& c : metric_) visit(c, convert);
    for (at::Tensor& x : metric_act_) convert(x);
    for (Conv2d& c : extract_) visit(c, convert);
    for (at::Tensor& x : extract_act_) convert(x);
    grid_.visit(convert);
    device_ = device;
    dtype_ = dtype;
    pair_ = PairState();
  }

 private:
  const PairState& pair(const at::Tensor& x0, const at::Tensor& x1, double scale) {
    if (pair_.a.defined() && pair_.scale == scale && pair_.a.sizes() == x0.sizes() && pair_.a.equal(x0) && pair_.b.equal(x1)) return pair_;
    PairState p;
    p.a = x0.clone();
    p.b = x1.clone();
    p.scale = scale;
    const int64_t n = x0.size(0);
    const std::array<at::Tensor, 3> feats = features((at::cat({x0, x1}, 0) - 0.5) / 0.5);
    for (size_t k = 0; k < 3; ++k) {
      p.feat0[k] = feats[k].narrow(0, 0, n);
      p.feat1[k] = feats[k].narrow(0, n, n);
    }
    p.half0 = resize_bilinear(x0, 0.5);
    p.half1 = resize_bilinear(x1, 0.5);
    const at::Tensor f0 = scale != 1 ? resize_bilinear(p.half0, scale) : p.half0;
    const at::Tensor f1 = scale != 1 ? resize_bilinear(p.half1, scale) : p.half1;
    // Both directions in one batch: every GMFlow step is per sample.
    at::Tensor flows = gmflow_(at::cat({f0, f1}, 0), at::cat({f1, f0}, 0));
    if (scale != 1) flows = resize_bilinear(flows, 1.0 / scale) / scale;
    p.flow01 = flows.narrow(0, 0, n);
    p.flow10 = flows.narrow(0, n, n);
    std::tie(p.metric0, p.metric1) = metrics(p.half0, p.half1, p.flow01, p.flow10);
    pair_ = std::move(p);
    return pair_;
  }

  std::array<at::Tensor, 3> features(at::Tensor x) const {
    std::array<at::Tensor, 3> out;
    for (size_t k = 0; k < 6; ++k) {
      x = prelu_act(extract_[k](x), extract_act_[k]);
      if (k % 2 == 1) out[k / 2] = x;
    }
    return out;
  }

  std::pair<at::Tensor, at::Tensor> metrics(const at::Tensor& img0, const at::Tensor& img1, const at::Tensor& flow01,
                                            const at::Tensor& flow10) const {
    const at::Tensor i0 = img0.to(at::kFloat), i1 = img1.to(at::kFloat);
    const at::Tensor m0 = (i0 - metric_backwarp(i1, flow01)).abs().mean(1, true);
    const at::Tensor m1 = (i1 - metric_backwarp(i0, flow10)).abs().mean(1, true);
    const at::Tensor x = at::cat({i0, -m0, flow01, occlusion(flow01, flow10), i1, -m1, flow10, occlusion(flow10, flow01)}, 1).to(dtype_);
    const at::Tensor y =
        metric_[2](prelu_act(metric_[1](prelu_act(metric_[0](x), metric_act_[0])), metric_act_[1])).to(at::kFloat);
    return {y.narrow(1, 0, 1), y.narrow(1, 1, 1)};
  }

  // IFNet_HDv3 at half size, scales 8, 4, 2, 1: its blended frame at t.
  at::Tensor ifnet(const at::Tensor& img0, const at::Tensor& img1, double t) const {
    const at::Tensor timestep = at::full({img0.size(0), 1, img0.size(2), img0.size(3)}, t, img0.options());
    const double scales[4] = {8, 4, 2, 1};
    at::Tensor flow, mask, warped0, warped1;
    for (size_t i = 0; i < ifnet_.size(); ++i) {
      if (!flow.defined()) {
        std::tie(flow, mask) = ifnet_[i](at::cat({img0, img1, timestep}, 1), at::Tensor(), scales[i]);
      } else {
        auto [df, dm] = ifnet_[i](at::cat({warped0, warped1, timestep, mask}, 1), flow, scales[i]);
        flow = flow + df;
        mask = mask + dm;
      }
      warped0 = backward_warp(img0, flow.narrow(1, 0, 2));
      warped1 = backward_warp(img1, flow.narrow(1, 2, 2));
    }
    const at::Tensor m = at::sigmoid(mask);
    return warped0 * m + warped1 * (1 - m);
  }

  // FusionNet.py's AnimeInterp.forward: frames and features splatted to t, then the GridNet.
  at::Tensor fuse(const PairState& p, const at::Tensor& merged, double t) const {
    const at::Tensor f1t = p.flow01 * t, f2t = p.flow10 * (1 - t);
    const auto splat = [&](const at::Tensor& x, const at::Tensor& flow, const at::Tensor& metric) {
      return softmax_splat_renormalised(x, flow, metric).to(dtype_);
    };
    const at::Tensor f1tdd = resize_bilinear(f1t, 0.5) * 0.5, f2tdd = resize_bilinear(f2t, 0.5) * 0.5;
    const at::Tensor z1dd = resize_bilinear(p.metric0, 0.5), z2dd = resize_bilinear(p.metric1, 0.5);
    const at::Tensor f1tddd = resize_bilinear(f1t, 0.25) * 0.25, f2tddd = resize_bilinear(f2t, 0.25) * 0.25;
    const at::Tensor z1ddd = resize_bilinear(p.metric0, 0.25), z2ddd = resize_bilinear(p.metric1, 0.25);
    const at::Tensor frames = at::cat({splat(p.half0, f1t, p.metric0), splat(p.half1, f2t, p.metric1)}, 1);
    const at::Tensor level1 = at::cat({splat(p.feat0[0], f1t, p.metric0), splat(p.feat1[0], f2t, p.metric1)}, 1);
    const at::Tensor level2 = at::cat({splat(p.feat0[1], f1tdd, z1dd), splat(p.feat1[1], f2tdd, z2dd)}, 1);
    const at::Tensor level3 = at::cat({splat(p.feat0[2], f1tddd, z1ddd), splat(p.feat1[2], f2tddd, z2ddd)}, 1);
    return grid_(frames, level1, level2, level3, merged.to(dtype_)).clamp(0, 1);
  }

  GmfssShape s_;
  Gmflow gmflow_;
  GridNet grid_;
  std::vector<IfBlock> ifnet_;
  std::array<Conv2d, 3> metric_;
  std::array<at::Tensor, 2> metric_act_;
  std::array<Conv2d, 6> extract_;
  std::array<at::Tensor, 6> extract_act_;
  PairState pair_;
  InterpolatorInfo info_;
  c10::Device device_ = c10::kCPU;
  c10::ScalarType dtype_ = at::kFloat;
};

int64_t width_of(const weights::StateDict& dict, const std::string& key, const std::string& source) {
  const auto d = dim_of(dict, key, 4, 0);
  if (!d || *d < 1 || *d > kMaxWidth) layout_error(source, str(key, " is missing or of an odd width"));
  return *d;
}

}  // namespace

bool GmfssShape::published() const {
  const GmflowShape g;
  return flow.dims[0] == g.dims[0] && flow.dims[1] == g.dims[1] && flow.dims[2] == g.dims[2] && flow.features == g.features &&
         flow.layers == g.layers && flow.ffn == g.ffn && flow.upsampler == g.upsampler && flow.upsample_factor == g.upsample_factor &&
         ifnet == std::array<int64_t, 4>{192, 128, 96, 64} && metric == 64 && features == std::array<int64_t, 3>{32, 64, 96} &&
         grid == std::array<int64_t, 3>{32, 64, 96};
}

std::string GmfssShape::variant() const { return published() ? "union" : "custom widths"; }

std::optional<GmfssShape> detect_gmfss(const weights::StateDict& dict, const std::string& source) {
  if (!has_keys(dict, {"flownet.backbone.conv1.weight", "ifnet.block0.conv0.0.0.weight", "metricnet.metric_net.0.weight",
                       "fusionnet.feat_ext.conv1.weight"}))
    return std::nullopt;
  GmfssShape s;
  s.flow = *detect_gmflow(dict, "flownet.", source);
  const std::set<int> blocks = key_indices(dict, "ifnet.block");
  if (blocks != std::set<int>{0, 1, 2, 3}) layout_error(source, str(blocks.size(), " IFNet blocks (RIFE 4.6's 4 expected)"));
  for (int i = 0; i < 4; ++i) {
    s.ifnet[size_t(i)] = width_of(dict, str("ifnet.block", i, ".conv0.1.0.weight"), source);
    if (s.ifnet[size_t(i)] % 2) layout_error(source, str("IFNet block ", i, " of odd width ", s.ifnet[size_t(i)]));
  }
  if (dim_of(dict, "ifnet.block0.conv0.0.0.weight", 4, 1) != 7 || dim_of(dict, "ifnet.block0.lastconv.0.weight", 4, 1) != 24)
    layout_error(source, "the IFNet is not RIFE 4.6's (7 input channels, 6 output planes)");
  s.metric = width_of(dict, "metricnet.metric_net.0.weight", source);
  for (int k = 0; k < 3; ++k) s.features[size_t(k)] = width_of(dict, str("fusionnet.feat_ext.conv", 2 * k + 1, ".weight"), source);
  const char* rows[3] = {"fusionnet.synnet.residual_model_01.1.weight", "fusionnet.synnet.residual_model_11.1.weight",
                         "fusionnet.synnet.residual_model_21.1.weight"};
  for (int k = 0; k < 3; ++k) s.grid[size_t(k)] = width_of(dict, rows[k], source);
  return s;
}

arch::ArchParams gmfss_arch_params(const GmfssShape& s) {
  arch::ArchParams p{{"flow_features", double(s.flow.features)},
                     {"flow_layers", double(s.flow.layers)},
                     {"flow_ffn", double(s.flow.ffn)},
                     {"flow_upsampler", double(s.flow.upsampler)},
                     {"metric", double(s.metric)}};
  for (size_t k = 0; k < 3; ++k) {
    p[str("flow_dim", k)] = double(s.flow.dims[k]);
    p[str("features", k)] = double(s.features[k]);
    p[str("grid", k)] = double(s.grid[k]);
  }
  for (size_t k = 0; k < 4; ++k) p[str("ifnet", k)] = double(s.ifnet[k]);
  return p;
}

std::unique_ptr<FrameInterpolator> build_gmfss(const weights::StateDict& dict, const std::string& source) {
  const std::optional<GmfssShape> shape = detect_gmfss(dict, source);
  if (!shape) throw Error(ErrorKind::Model, str(source, ": not a GMFSS (flownet., ifnet., metricnet. and fusionnet. expected)"));
  WeightReader r(dict, source);
  auto net = std::make_unique<Gmfss>(r, *shape);
  r.expect_all_used();
  return net;
}

std::string describe_gmfss(const GmfssShape& shape, const weights::StateDict& dict) {
  return describe_interpolator("gmfss", shape.variant(), kMultiple, dict, gmfss_arch_params(shape));
}

std::optional<weights::StateDict> gmfss_folder_state_dict(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir / "metric.pkl", ec) && !fs::exists(dir / "fusionnet.pkl", ec)) return std::nullopt;
  weights::StateDict merged;
  for (const auto& [file, prefix] : {std::pair{"flownet.pkl", "flownet."}, std::pair{"rife.pkl", "ifnet."},
                                     std::pair{"metric.pkl", "metricnet."}, std::pair{"fusionnet.pkl", "fusionnet."}}) {
    if (!fs::exists(dir / file, ec))
      throw Error(ErrorKind::Model, str(dir.string(), ": a GMFSS folder without ", file,
                                        " (flownet.pkl, rife.pkl, metric.pkl and fusionnet.pkl expected)"));
    for (auto& [key, t] : weights::load_weights(dir / file)) merged[prefix + key] = t;
  }
  return merged;
}

InterpolatorNetwork gmfss_interpolator() {
  return {"gmfss",
          [](const weights::StateDict& dict, const std::string& source) -> std::optional<arch::ArchParams> {
            if (auto shape = detect_gmfss(dict, source)) return gmfss_arch_params(*shape);
            return std::nullopt;
          },
          [](const weights::StateDict& dict, const std::string& source) { return build_gmfss(dict, source); },
          [](const weights::StateDict& dict, const std::string& source) { return describe_gmfss(*detect_gmfss(dict, source), dict); }};
}

}  // namespace framelift::models
