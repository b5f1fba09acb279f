// FILM's network, written from the algorithm of google-research/frame-interpolation
// (models/film_net) in the module layout of its PyTorch port; the numbers checked against the port
// are in tests/models/film_test.cpp.
#include "models/film.h"

#include <ATen/ATen.h>

#include <array>
#include <set>
#include <tuple>

#include "arch/declaration.h"
#include "models/backward_warp.h"
#include "models/interpolator_networks.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr double kSlope = 0.2;        // every activation is TF's leaky_relu default
constexpr int64_t kMaxFilters = 1024; // published: 64
constexpr int kMaxLevels = 10;        // published: 7 (a 512-pixel multiple at 10)

[[noreturn]] void layout_error(const std::string& source, const std::string& problem) {
  throw Error(ErrorKind::Model, str(source, ": FILM layout: ", problem));
}

// The cascaded feature width of pyramid level i: its own sub-level 0 and the deeper sub-levels of
// the finer levels below it.
int64_t feature_channels(const FilmShape& s, int level) { return s.filters * ((int64_t{2} << std::min(level, s.sub_levels - 1)) - 1); }

// Both frames' pixels and features warped, and both time-scaled flows.
int64_t aligned_channels(const FilmShape& s, int level) { return 2 * (feature_channels(s, level) + 3) + 4; }

// A convolution of the port's util.Conv2d: "<p>.0.weight" (an nn.Sequential around it), or in
// release v1.0.0 "<p>.weight" for those without activation.
struct FilmConv {
  Conv2d conv;
  bool activation = true;
  bool pad_right_bottom = false;  // 2x2: TF's "same" for an even kernel

  FilmConv() = default;
  FilmConv(WeightReader& r, const std::string& p, int64_t in, int64_t out, int64_t k, bool act)
      : activation(act), pad_right_bottom(k == 2) {
    const std::string prefix = r.has(p + ".0.weight") ? p + ".0" : p;
    conv = read_conv(r, prefix, in, out, k, 1, k == 3 ? 1 : 0);
  }
  at::Tensor operator()(const at::Tensor& x) const {
    const at::Tensor y = conv(pad_right_bottom ? at::constant_pad_nd(x, {0, 1, 0, 1}, 0) : x);
    return activation ? at::leaky_relu(y, kSlope) : y;
  }
};

// A flow predictor: n 3x3 convolutions, a 1x1 halving the width, a 1x1 to (dx, dy).
struct FlowPredictor {
  std::vector<FilmConv> convs;

  FlowPredictor(WeightReader& r, const std::string& p, int64_t in, int64_t n, int64_t width) {
    for (int64_t c = 0; c < n; ++c) convs.emplace_back(r, str(p, "._convs.", c), c == 0 ? in : width, width, 3, true);
    convs.emplace_back(r, str(p, "._convs.", n), width, width / 2, 1, true);
    convs.emplace_back(r, str(p, "._convs.", n + 1), width / 2, 2, 1, false);
  }
  at::Tensor operator()(at::Tensor x) const {
    for (const FilmConv& c : convs) x = c(x);
    return x;
  }
};

// One decoder level: nearest 2x, a 2x2 convolution, the level's aligned input beside it, two 3x3.
struct FusionBlock {
  FilmConv up, mix, refine;
};

at::Tensor avg_pool_2x2(const at::Tensor& x) { return at::avg_pool2d(x, {2, 2}, {2, 2}); }

class Film : public FrameInterpolator {
 public:
  Film(const weights::StateDict& dict, const std::string& source, const FilmShape& s) : s_(s) {
    WeightReader r(dict, source);
    for (int j = 0; j < s.sub_levels; ++j) {
      const std::string p = str("extract.extract_sublevels.convs.", j);
      const int64_t in = j == 0 ? 3 : s.filters << (j - 1), out = s.filters << j;
      extract_.push_back({FilmConv(r, p + ".0", in, out, 3, true), FilmConv(r, p + ".1", out, out, 3, true)});
    }
    const int shared = s.sub_levels - 1;
    shared_ = std::make_unique<FlowPredictor>(r, "predict_flow._predictor", 2 * feature_channels(s, shared), s.flow_convs[size_t(shared)],
                                              s.flow_filters[size_t(shared)]);
    // Upstream lists the fine levels' own predictors coarsest first: _predictors.0 is level S-2.
    for (int level = 0; level < shared; ++level)
      own_.emplace_back(r, str("predict_flow._predictors.", shared - 1 - level), 2 * feature_channels(s, level),
                        s.flow_convs[size_t(level)], s.flow_filters[size_t(level)]);
    for (int k = 0; k < s.fusion_levels - 1; ++k) {
      const int level = s.fusion_levels - 2 - k;
      const std::string p = str("fuse.convs.", k);
      const int64_t width = s.filters << level, below = k == 0 ? aligned_channels(s, level + 1) : s.filters << (level + 1);
      fusion_.push_back({FilmConv(r, p + ".0", below, width, 2, false),
                         FilmConv(r, p + ".1", aligned_channels(s, level) + width, width, 3, true),
                         FilmConv(r, p + ".2", width, width, 3, true)});
    }
    output_ = read_conv(r, "fuse.output_conv", s.filters, 3, 1, 1, 0);
    r.expect_all_used();
    info_ = {"film", s.variant(), 1 << (s.pyramid_levels - 1)};
  }

  const InterpolatorInfo& info() const override { return info_; }

  at::Tensor interpolate(const at::Tensor& a, const at::Tensor& b, double t, double scale) override {
    if (scale != 1.0) throw Error(ErrorKind::Usage, str("FILM has no flow scale (scale=", scale, "); it estimates flow on its own pyramid"));
    at::NoGradGuard no_grad;
    // Zero padding, centred, as upstream's tools and the port's inference.py pad.
    const int64_t m = info_.size_multiple, h = a.size(2), w = a.size(3);
    const int64_t ph = (m - h % m) % m, pw = (m - w % m) % m;
    const std::vector<int64_t> pads = {pw / 2, pw - pw / 2, ph / 2, ph - ph / 2};
    const at::Tensor x0 = at::constant_pad_nd(a.to(device_, dtype_), pads, 0);
    const at::Tensor x1 = at::constant_pad_nd(b.to(device_, dtype_), pads, 0);
    const at::Tensor out = predict(x0, x1, t);
    return out.narrow(2, pads[2], h).narrow(3, pads[0], w).clamp(0, 1).to(a.scalar_type());
  }

  void to(c10::Device device, c10::ScalarType dtype) override {
    const TensorVisitor convert = [&](at::Tensor& x) { x = x.to(device, dtype); };
    for (auto& block : extract_)
      for (FilmConv& c : block) visit(c.conv, convert);
    for (FlowPredictor* p : predictors())
      for (FilmConv& c : p->convs) visit(c.conv, convert);
    for (FusionBlock& f : fusion_)
      for (FilmConv* c : {&f.up, &f.mix, &f.refine}) visit(c->conv, convert);
    visit(output_, convert);
    device_ = device;
    dtype_ = dtype;
  }

 private:
  std::vector<FlowPredictor*> predictors() {
    std::vector<FlowPredictor*> all = {shared_.get()};
    for (FlowPredictor& p : own_) all.push_back(&p);
    return all;
  }

  std::vector<at::Tensor> image_pyramid(const at::Tensor& x) const {
    std::vector<at::Tensor> p = {x};
    for (int i = 1; i < s_.pyramid_levels; ++i) p.push_back(avg_pool_2x2(p.back()));
    return p;
  }

  // Each pyramid level through the shared sub-levels (pooling between them), then level i's
  // features: its own sub-level 0, level i-1's sub-level 1, ... concatenated in that order.
  std::vector<at::Tensor> features(const std::vector<at::Tensor>& pyramid) const {
    const int levels = s_.pyramid_levels;
    std::vector<std::vector<at::Tensor>> sub(static_cast<size_t>(levels));
    for (int m = 0; m < levels; ++m) {
      at::Tensor h = pyramid[size_t(m)];
      for (int j = 0; j < std::min(levels - m, s_.sub_levels); ++j) {
        if (j > 0) h = avg_pool_2x2(h);
        h = extract_[size_t(j)][1](extract_[size_t(j)][0](h));
        sub[size_t(m)].push_back(h);
      }
    }
    std::vector<at::Tensor> out;
    for (int i = 0; i < levels; ++i) {
      std::vector<at::Tensor> parts;
      for (int j = 0; j <= std::min(i, s_.sub_levels - 1); ++j) parts.push_back(sub[size_t(i - j)][size_t(j)]);
      out.push_back(at::cat(parts, 1));
    }
    return out;
  }

  const FlowPredictor& predictor(int level) const { return level >= s_.sub_levels - 1 ? *shared_ : own_[size_t(level)]; }

  // The flow pyramid from a's features to b's, coarse to fine, each level's residual on the one
  // below upsampled. Flows stay fp32 whatever the network runs in: they address pixels.
  std::vector<at::Tensor> flows(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) const {
    const int top = s_.pyramid_levels - 1;
    std::vector<at::Tensor> out(size_t(s_.pyramid_levels));
    at::Tensor v = predictor(top)(at::cat({a[size_t(top)], b[size_t(top)]}, 1)).to(at::kFloat);
    out[size_t(top)] = v;
    for (int i = top - 1; i >= 0; --i) {
      const at::Tensor& bi = b[size_t(i)];
      const at::Tensor u = at::upsample_bilinear2d(v * 2.0, {bi.size(2), bi.size(3)}, false);
      const at::Tensor warped = backward_warp(bi, u);
      v = predictor(i)(at::cat({a[size_t(i)], warped}, 1)).to(at::kFloat) + u;
      out[size_t(i)] = v;
    }
    return out;
  }

  at::Tensor predict(const at::Tensor& x0, const at::Tensor& x1, double t) {
    const std::vector<at::Tensor> p0 = image_pyramid(x0), p1 = image_pyramid(x1);
    const std::vector<at::Tensor> f0 = features(p0), f1 = features(p1);
    const std::vector<at::Tensor> forward = flows(f0, f1), backward = flows(f1, f0);
    std::vector<at::Tensor> aligned;
    for (int i = 0; i < s_.fusion_levels; ++i) {
      const auto l = size_t(i);
      const at::Tensor bt = backward[l] * t, ft = forward[l] * (1.0 - t);
      aligned.push_back(at::cat({backward_warp(at::cat({p0[l], f0[l]}, 1), bt), backward_warp(at::cat({p1[l], f1[l]}, 1), ft),
                                 bt.to(dtype_), ft.to(dtype_)},
                                1));
    }
    at::Tensor net = aligned.back();
    for (size_t k = 0; k < fusion_.size(); ++k) {
      const at::Tensor& skip = aligned[size_t(s_.fusion_levels) - 2 - k];
      net = at::upsample_nearest2d(net, {skip.size(2), skip.size(3)});
      net = fusion_[k].up(net);
      net = fusion_[k].refine(fusion_[k].mix(at::cat({skip, net}, 1)));
    }
    return output_(net);
  }

  FilmShape s_;
  std::vector<std::array<FilmConv, 2>> extract_;
  std::unique_ptr<FlowPredictor> shared_;
  std::vector<FlowPredictor> own_;  // level 0 .. S-2
  std::vector<FusionBlock> fusion_;  // coarsest first
  Conv2d output_;
  InterpolatorInfo info_;
  c10::Device device_ = c10::kCPU;
  c10::ScalarType dtype_ = at::kFloat;
};

// A predictor's convolution count and width: "<p>._convs.N" runs 0 .. n+1.
std::pair<int64_t, int64_t> predictor_shape(const weights::StateDict& dict, const std::string& p, const std::string& source) {
  const std::set<int> convs = key_indices(dict, p + "._convs.");
  const int count = int(convs.size());
  if (count < 3 || *convs.rbegin() != count - 1) layout_error(source, str(p, " has ", count, " convolutions, not n 3x3 and two 1x1"));
  const auto width = dim_of(dict, p + "._convs.0.0.weight", 4, 0);
  if (!width || *width < 2 || *width > 4 * kMaxFilters) layout_error(source, str(p, "._convs.0.0.weight is missing or of an odd width"));
  return {count - 2, *width};
}

}  // namespace

bool FilmShape::published() const {
  return filters == 64 && sub_levels == 4 && pyramid_levels == 7 && fusion_levels == 5 &&
         flow_convs == std::vector<int64_t>{3, 3, 3, 3} && flow_filters == std::vector<int64_t>{32, 64, 128, 256};
}

std::string FilmShape::variant() const { return published() ? "film_net" : "custom widths"; }

std::optional<FilmShape> detect_film(const weights::StateDict& dict, const std::string& source) {
  if (!has_keys(dict, {"extract.extract_sublevels.convs.0.0.0.weight", "predict_flow._predictor._convs.0.0.weight", "fuse.output_conv.weight"}))
    return std::nullopt;
  FilmShape s;
  const std::set<int> subs = key_indices(dict, "extract.extract_sublevels.convs.");
  s.sub_levels = int(subs.size());
  if (s.sub_levels < 1 || *subs.rbegin() != s.sub_levels - 1 || s.sub_levels > kMaxLevels)
    layout_error(source, str(s.sub_levels, " feature sub-levels (1 to ", kMaxLevels, ", numbered from 0)"));
  const auto filters = dim_of(dict, "extract.extract_sublevels.convs.0.0.0.weight", 4, 0);
  if (!filters || *filters < 1 || *filters > kMaxFilters) layout_error(source, str("extractor width out of 1 to ", kMaxFilters));
  s.filters = *filters;
  s.fusion_levels = int(key_indices(dict, "fuse.convs.").size()) + 1;
  // Upstream's channel arithmetic holds only for F = S + 1 (its defaults: 4 and 5).
  if (s.fusion_levels != s.sub_levels + 1)
    layout_error(source, str(s.fusion_levels - 1, " fusion blocks for ", s.sub_levels, " sub-levels (FILM has one more level fused than sub-levels)"));
  s.pyramid_levels = std::max(7, s.fusion_levels);
  s.legacy_keys = dict.count("fuse.convs.0.0.weight") != 0;
  const std::set<int> own = key_indices(dict, "predict_flow._predictors.");
  if (int(own.size()) != s.sub_levels - 1) layout_error(source, str(own.size(), " level predictors for ", s.sub_levels, " sub-levels"));
  s.flow_convs.resize(size_t(s.sub_levels));
  s.flow_filters.resize(size_t(s.sub_levels));
  for (int level = 0; level < s.sub_levels - 1; ++level)
    std::tie(s.flow_convs[size_t(level)], s.flow_filters[size_t(level)]) =
        predictor_shape(dict, str("predict_flow._predictors.", s.sub_levels - 2 - level), source);
  std::tie(s.flow_convs.back(), s.flow_filters.back()) = predictor_shape(dict, "predict_flow._predictor", source);
  return s;
}

arch::ArchParams film_arch_params(const FilmShape& s) {
  arch::ArchParams p{{"filters", double(s.filters)},
                     {"sub_levels", double(s.sub_levels)},
                     {"pyramid_levels", double(s.pyramid_levels)},
                     {"fusion_levels", double(s.fusion_levels)}};
  for (size_t k = 0; k < s.flow_convs.size(); ++k) {
    p[str("flow_convs_", k)] = double(s.flow_convs[k]);
    p[str("flow_filters_", k)] = double(s.flow_filters[k]);
  }
  return p;
}

std::unique_ptr<FrameInterpolator> build_film(const weights::StateDict& dict, const std::string& source, const FilmShape& shape) {
  if (shape.pyramid_levels < shape.fusion_levels || shape.pyramid_levels > kMaxLevels)
    layout_error(source, str(shape.pyramid_levels, " pyramid levels (", shape.fusion_levels, " to ", kMaxLevels, ")"));
  return std::make_unique<Film>(dict, source, shape);
}

std::unique_ptr<FrameInterpolator> build_film(const weights::StateDict& dict, const std::string& source) {
  const std::optional<FilmShape> shape = detect_film(dict, source);
  if (!shape) throw Error(ErrorKind::Model, str(source, ": not a FILM (extract, predict_flow and fuse expected)"));
  return build_film(dict, source, *shape);
}

std::string describe_film(const FilmShape& shape, const weights::StateDict& dict) {
  return describe_interpolator("film", shape.variant(), 1 << (shape.pyramid_levels - 1), dict,
                               film_arch_params(shape), {{"release_layout", shape.legacy_keys ? "v1.0.0" : "v1.0.2"}});
}

InterpolatorNetwork film_interpolator() {
  return {"film",
          [](const weights::StateDict& dict, const std::string& source) -> std::optional<arch::ArchParams> {
            if (auto shape = detect_film(dict, source)) return film_arch_params(*shape);
            return std::nullopt;
          },
          [](const weights::StateDict& dict, const std::string& source) { return build_film(dict, source); },
          [](const weights::StateDict& dict, const std::string& source) { return describe_film(*detect_film(dict, source), dict); }};
}

}  // namespace framelift::models
