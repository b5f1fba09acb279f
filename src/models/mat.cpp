// MAT (Li et al. 2022, "MAT: Mask-Aware Transformer for Large Hole Image Inpainting"), fenglinglwb's
// Generator as spandrel loads its releases (Places_512_FullData_G.pth, CelebA-HQ_512.pth): two
// stages at one fixed size R (512 released).
//   1. A coarse fill: partial convolutions (a convolution rescaled by how much of its window is
//      valid, the valid region grown each time) from the image to a 64x64 map, five Swin-style
//      window-attention layers (64 -> 32 -> 16 -> 32 -> 64, windows 8/16/16/16/8, six heads) in
//      which tokens attend only to valid tokens, a style from the 16x16 middle, and style-modulated
//      3x3 convolutions back to R with to-RGB layers. It is composited into the known pixels.
//   2. The final fill: an encoder from the composite to 16x16, a StyleGAN2 decoder (modulated and
//      demodulated 3x3s, 1x1 to-RGB layers summed across sizes) whose styles join the latent w
//      with one taken from the encoder's 16x16 features; composited again.
// Every layer is StyleGAN2-ADA's: weights scaled by 1 / sqrt(fan-in) at run time (folded at load),
// leaky ReLU 0.2 times sqrt(2), resampling through the [1, 3, 3, 1] low-pass filter.
//
// The call is spandrel's MAT wrapper and MaskedImageModelDescriptor: the image goes in at
// 2 x - 1, the mask inverted (MAT's 1 = known), truncation_psi 1, noise_mode "none" (the
// releases have no noise inputs), the output (y + 1) / 2 clamped to [0, 1]. Where upstream draws
// random numbers at each call, framelift fixes them, so that a video does not flicker:
//   * z: upstream draws np.random.randn(1, z_dim) (spandrel once, unseeded; MAT's generate_image.py
//     after seeding numpy with 240). Here z is what numpy's RandomState(240).randn(1, z_dim) gives
//     (MT19937 and numpy's polar Box-Muller, reproduced below), so w is a constant of the weights.
//   * the two F.dropout(0.5 * ones, training=True) that mix a w-derived map into the 16x16
//     features of each stage (x keep + add (1 - keep), keep 0 or 1 at random per element and
//     call): fixed keep patterns, the same for every image, from the same generator's next 32-bit
//     words after z, one word an element in row-major order ([256 tokens, dim] of the first
//     stage, then [nf(4), 16, 16] of the second), kept where the word's top bit is 0.
// tests/data/arch/make_mat_references.py runs upstream with exactly these.
//
// Input [N, 4, R, R]: RGB in [0, 1] and the mask (1: fill, framelift's and spandrel's convention);
// output [N, 3, R, R], the input's own pixels exactly where the mask is 0. Other sizes are
// Error(Usage): the first stage's attention windows and token maps are fixed by R.
#include <ATen/ATen.h>

#include <cmath>
#include <optional>
#include <random>

#include "arch/declaration.h"
#include "infer/conv_layout.h"
#include "infer/fp32_islands.h"
#include "models/builtin_architectures.h"
#include "models/exact_size.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kHeads = 6;        // upstream's num_heads; not in the weights
constexpr int64_t kTokenSide = 64;   // the first stage's transformer works at 64x64 whatever R
constexpr int64_t kMiddleSide = 16;  // and has its middle (style, w mixing) at 16x16
constexpr int64_t kMaxWidth = 4096;
constexpr uint32_t kSeed = 240;
constexpr int kStages = 5;
constexpr int64_t kStageSide[kStages] = {64, 32, 16, 32, 64};
constexpr int64_t kStageWindow[kStages] = {8, 16, 16, 16, 8};

const std::string kFirst = "synthesis.first_stage.";

// Leaky ReLU 0.2 with StyleGAN2's gain sqrt(2).
at::Tensor lrelu(const at::Tensor& x) { return at::leaky_relu(x, 0.2) * M_SQRT2; }

// --- the fixed random numbers ---

// numpy's legacy RandomState(seed): MT19937 seeded as std::mt19937 is, doubles of 53 bits from two
// words, gaussians by the polar method (two at a time, the second kept for the next call).
class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint32_t seed) : mt_(seed) {}
  uint32_t word() { return uint32_t(mt_()); }
  double gauss() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double x1, x2, r2;
    do {
      x1 = 2 * uniform() - 1;
      x2 = 2 * uniform() - 1;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1 || r2 == 0);
    const double f = std::sqrt(-2 * std::log(r2) / r2);
    spare_ = f * x1;
    has_spare_ = true;
    return f * x2;
  }

 private:
  double uniform() {
    const uint32_t a = word() >> 5, b = word() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }
  std::mt19937 mt_;
  double spare_ = 0;
  bool has_spare_ = false;
};

at::Tensor keep_pattern(NumpyRandomState& rs, at::IntArrayRef shape) {
  at::Tensor keep = at::empty(shape, at::kFloat);
  float* p = keep.data_ptr<float>();
  for (int64_t i = 0; i < keep.numel(); ++i) p[i] = rs.word() < 0x80000000u ? 1.0f : 0.0f;
  return keep;
}

// --- StyleGAN2-ADA's layers ---

// The [1, 3, 3, 1] filter's 4x4 outer product, normalised, times `gain`, as a depthwise
// convolution with zero padding `pad` on each side (upfirdn2d without up or down).
at::Tensor blur(const at::Tensor& x, int64_t pad, double gain) {
  const at::Tensor f1 = at::tensor({1.0f, 3.0f, 3.0f, 1.0f});
  const at::Tensor f = (at::outer(f1, f1) * (gain / 64)).to(x.options());
  const int64_t c = x.size(1);
  return infer::conv2d(x, f.view({1, 1, 4, 4}).expand({c, 1, 4, 4}).contiguous(), at::Tensor(), 1, pad, 1, c);
}

// upsample2d: zeros between the pixels, then the filter (gain 4), padded 2 before and 1 after.
at::Tensor upsample(const at::Tensor& x) {
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  at::Tensor y = at::constant_pad_nd(x.reshape({n, c, h, 1, w, 1}), {0, 1, 0, 0, 0, 1}).reshape({n, c, 2 * h, 2 * w});
  y = at::constant_pad_nd(y, {2, 1, 2, 1}).contiguous(infer::activation_format(x.device()));
  return blur(y, 0, 4);
}

// conv2d_resample of a 3x3 with up 2: a stride-2 transposed convolution of the flipped kernel, then
// the filter (gain 4) padded 1. `weight` is [out, in, 3, 3].
at::Tensor conv_up(const at::Tensor& x, const at::Tensor& weight) {
  const at::Tensor t = weight.transpose(0, 1).flip({2, 3}).contiguous();
  return blur(infer::conv_transpose2d(x, t, at::Tensor(), {2, 2}, {0, 0}, {0, 0}, 1, {1, 1}), 1, 4);
}

// Conv2dLayer: weight and bias, optional up 2 or down 2, leaky ReLU or linear.
struct StyleGanConv {
  at::Tensor weight, bias;  // weight already scaled by 1 / sqrt(in k^2)
  int up = 1, down = 1;
  bool act = true;
  at::Tensor operator()(const at::Tensor& x) const {
    const int64_t k = weight.size(2);
    at::Tensor y;
    if (down == 2) y = infer::conv2d(blur(x, 2, 1), weight, bias, 2, 0);
    else if (up == 2) y = conv_up(x, weight) + bias.view({1, -1, 1, 1});
    else y = infer::conv2d(x, weight, bias, 1, k / 2);
    return act ? lrelu(y) : y;
  }
  void visit_weights(const TensorVisitor& f) {
    f(weight);
    f(bias);
  }
};

// Every Conv2dLayer and modulated convolution stores its filter; it is always [1, 3, 3, 1]'s.
void filter_buffer(WeightReader& r, const std::string& p) { r.recomputed(p + ".resample_filter", {4, 4}); }

StyleGanConv read_sg_conv(WeightReader& r, const std::string& p, int64_t in, int64_t out, int64_t k, int up = 1, int down = 1,
                          bool act = true) {
  StyleGanConv c;
  c.weight = r.tensor(p + ".weight", {out, in, k, k}) / std::sqrt(double(in * k * k));
  c.bias = r.tensor(p + ".bias", {out});
  filter_buffer(r, p);
  c.up = up;
  c.down = down;
  c.act = act;
  return c;
}

// FullyConnectedLayer: gains (1 / sqrt(in), the learning-rate multiplier) folded.
struct Fc {
  Linear linear;
  bool act = true;
  at::Tensor operator()(const at::Tensor& x) const { return act ? lrelu(linear(x)) : linear(x); }
  void visit_weights(const TensorVisitor& f) { linear.visit_weights(f); }
};

Fc read_fc(WeightReader& r, const std::string& p, int64_t in, int64_t out, bool act, double lr = 1) {
  Linear l = read_linear(r, p, in, out);
  l.weight = l.weight * (lr / std::sqrt(double(in)));
  l.bias = l.bias * lr;
  return {l, act};
}

// Conv2dLayerPartial: the convolution rescaled by k^2 / (valid pixels in its window) where any
// is valid, zero elsewhere; the valid mask grows to every window that had one. `mask` may be
// undefined (no mask from there on).
struct PartialConv {
  StyleGanConv conv;
  std::pair<at::Tensor, at::Tensor> operator()(const at::Tensor& x, const at::Tensor& mask) const {
    if (!mask.defined()) return {conv(x), at::Tensor()};
    const int64_t k = conv.weight.size(2);
    const at::Tensor ones = at::ones({1, 1, k, k}, mask.options());
    const at::Tensor count = at::conv2d(mask, ones, {}, {conv.down, conv.down}, {k / 2, k / 2});
    const at::Tensor valid = count.clamp(0, 1);
    const at::Tensor ratio = double(k * k) / (count + 1e-8) * valid;
    return {conv(x) * ratio.to(x.scalar_type()), valid};
  }
};

// ModulatedConv2d as StyleConv (bias, leaky ReLU, demodulated) or ToRGB (bias, linear, not
// demodulated). Modulating the input and demodulating the output with one shared weight is
// upstream's per-sample weight, rearranged: the same sums, batched.
struct ModulatedConv {
  at::Tensor weight, bias;  // [out, in, k, k] scaled by 1 / sqrt(in k^2); [out]
  at::Tensor squares;       // [out, in]: weight^2 summed over the kernel, for demodulation
  Fc affine;                // style -> [in], bias_init 1 upstream
  bool up = false, demodulate = true;
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& style) const {
    const at::Tensor s = affine(style);
    const int64_t n = x.size(0);
    const at::Tensor xs = x * s.view({n, -1, 1, 1});
    at::Tensor y = up ? conv_up(xs, weight) : infer::conv2d(xs, weight, at::Tensor(), 1, weight.size(2) / 2);
    if (demodulate) y = y * at::rsqrt(at::matmul(s.square(), squares.t()) + 1e-8).view({n, -1, 1, 1});
    y = y + bias.view({1, -1, 1, 1});
    return demodulate ? lrelu(y) : y;
  }
  void visit_weights(const TensorVisitor& f) {
    f(weight);
    f(bias);
    f(squares);
    affine.visit_weights(f);
  }
};

// StyleConv "<p>" (conv.weight [1, out, in, k, k], conv.affine, bias) or ToRGB (the same, k 1,
// and its own filter buffer for the skip's upsampling).
ModulatedConv read_modulated(WeightReader& r, const std::string& p, int64_t in, int64_t out, int64_t k, int64_t style, bool rgb,
                             bool up = false) {
  ModulatedConv m;
  const at::Tensor w = r.tensor(p + ".conv.weight", {1, out, in, k, k})[0];
  m.weight = w / std::sqrt(double(in * k * k));
  m.squares = m.weight.square().sum({2, 3});
  m.bias = r.tensor(p + ".bias", {out});
  m.affine = read_fc(r, p + ".conv.affine", style, in, false);
  filter_buffer(r, p + ".conv");
  if (rgb) filter_buffer(r, p);
  m.up = up;
  m.demodulate = !rgb;
  return m;
}

// --- the first stage's transformer ---

at::Tensor to_map(const at::Tensor& tokens, int64_t side) {
  return tokens.transpose(1, 2).reshape({tokens.size(0), tokens.size(2), side, side});
}
at::Tensor to_tokens(const at::Tensor& map) { return map.flatten(2).transpose(1, 2); }

at::Tensor windows(const at::Tensor& x, int64_t side, int64_t win) {  // [B, side^2, C] -> [B nW, win^2, C]
  const int64_t b = x.size(0), c = x.size(2), n = side / win;
  return x.reshape({b, n, win, n, win, c}).permute({0, 1, 3, 2, 4, 5}).reshape({-1, win * win, c});
}
at::Tensor unwindows(const at::Tensor& x, int64_t side, int64_t win) {
  const int64_t n = side / win, c = x.size(2), b = x.size(0) / (n * n);
  return x.reshape({b, n, n, win, win, c}).permute({0, 1, 3, 2, 4, 5}).reshape({b, side * side, c});
}

// The shifted windows' mask (0 within a region, -100 across), [nW, win^2, win^2], as Swin makes it.
at::Tensor shift_mask(int64_t side, int64_t win, int64_t shift) {
  at::Tensor region = at::zeros({1, side, side, 1});
  const int64_t bounds[4] = {0, side - win, side - shift, side};
  int64_t label = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      region.narrow(1, bounds[i], bounds[i + 1] - bounds[i]).narrow(2, bounds[j], bounds[j + 1] - bounds[j]).fill_(double(label++));
  const at::Tensor w = windows(region.view({1, side * side, 1}), side, win).squeeze(-1);
  const at::Tensor diff = w.unsqueeze(1) - w.unsqueeze(2);
  return at::where(diff != 0, at::full({}, -100.0f), at::zeros({}));
}

struct SwinBlock {
  Linear q, k, v, proj;
  Fc fuse, fc1, fc2;
  int64_t side = 64, win = 8, shift = 0;
  at::Tensor shifted;  // [nW, N, N] when shift > 0

  // x [B, side^2, C], mask [B, side^2, 1] of the valid tokens (undefined: none).
  std::pair<at::Tensor, at::Tensor> operator()(const at::Tensor& x, const at::Tensor& mask) const {
    const int64_t b = x.size(0), c = x.size(2), n = win * win;
    const auto roll = [&](const at::Tensor& t, int64_t by) {
      if (shift == 0) return t;
      return at::roll(t.reshape({b, side, side, -1}), {by, by}, {1, 2}).reshape({b, side * side, -1});
    };
    const at::Tensor xw = windows(roll(x, -shift), side, win);
    const at::Tensor normed = xw / at::norm(xw, 2, {-1}, true).clamp_min(1e-12);
    const int64_t bw = xw.size(0), d = c / kHeads;
    const at::Tensor qh = q(normed).view({bw, n, kHeads, d}).permute({0, 2, 1, 3});
    const at::Tensor kh = k(normed).view({bw, n, kHeads, d}).permute({0, 2, 3, 1});
    const at::Tensor vh = v(xw).view({bw, n, kHeads, d}).permute({0, 2, 1, 3});
    at::Tensor attn = at::matmul(qh, kh) * (1.0 / std::sqrt(double(d)));
    if (shift > 0) {
      const int64_t nw = shifted.size(0);
      attn = (attn.view({bw / nw, nw, kHeads, n, n}) + shifted.unsqueeze(1).unsqueeze(0)).view({bw, kHeads, n, n});
    }
    at::Tensor new_mask;
    if (mask.defined()) {
      // A key that is not valid is pushed to -100 (a mask value in between, which a binary mask
      // never has, is added as it is, as upstream's masked_fill pair leaves it).
      const at::Tensor mw = windows(roll(mask, -shift), side, win);  // [bw, n, 1]
      const at::Tensor m = mw.squeeze(-1).view({bw, 1, 1, n});
      attn = attn + at::where(m == 0, at::full({}, -100.0, m.options()), at::where(m == 1, at::zeros({}, m.options()), m)).to(attn.scalar_type());
      // A window with any valid token makes all of its tokens valid.
      new_mask = roll(unwindows(mw.sum(1, true).clamp(0, 1).expand({bw, n, 1}).contiguous(), side, win), shift);
    }
    const at::Tensor out = proj(at::matmul(at::softmax(attn, -1), vh).transpose(1, 2).reshape({bw, n, c}));
    const at::Tensor y = roll(unwindows(out, side, win), shift);
    return {fc2(fc1(fuse(at::cat({x, y}, -1)))), new_mask};
  }
  void visit_weights(const TensorVisitor& f) {
    for (Linear* l : {&q, &k, &v, &proj}) l->visit_weights(f);
    for (Fc* l : {&fuse, &fc1, &fc2}) l->visit_weights(f);
    if (shifted.defined()) f(shifted);
  }
};

// BasicLayer: an optional resampling partial convolution, the blocks, a partial 3x3, + its input.
struct TransformerStage {
  std::optional<PartialConv> resample;
  std::vector<SwinBlock> blocks;
  PartialConv conv;
  int64_t side = 64;
  std::pair<at::Tensor, at::Tensor> operator()(at::Tensor x, at::Tensor mask) const {
    if (resample) {
      const int64_t before = resample->conv.down == 2 ? side * 2 : side / 2;
      const at::Tensor m = mask.defined() ? to_map(mask, before) : at::Tensor();
      auto [y, ym] = (*resample)(to_map(x, before), m);
      x = to_tokens(y);
      mask = ym.defined() ? to_tokens(ym) : at::Tensor();
    }
    const at::Tensor identity = x;
    for (const SwinBlock& b : blocks) std::tie(x, mask) = b(x, mask);
    auto [y, ym] = conv(to_map(x, side), mask.defined() ? to_map(mask, side) : at::Tensor());
    return {to_tokens(y) + identity, ym.defined() ? to_tokens(ym) : at::Tensor()};
  }
  void visit_weights(const TensorVisitor& f) {
    if (resample) resample->conv.visit_weights(f);
    for (SwinBlock& b : blocks) b.visit_weights(f);
    conv.conv.visit_weights(f);
  }
};

// A style block of a decoder: a modulated 3x3 up, + the skip, a modulated 3x3, to RGB + the
// coarser image upsampled (DecStyleBlock and DecBlock; the skip and styles differ by caller).
struct StyleBlock {
  ModulatedConv conv0, conv1, rgb;
  // x, the running image (undefined at the first), the style, the skip; returns x and the image.
  std::pair<at::Tensor, at::Tensor> operator()(const at::Tensor& x, const at::Tensor& img, const at::Tensor& style,
                                               const at::Tensor& skip) const {
    const at::Tensor y = conv1(conv0(x, style) + skip, style);
    at::Tensor out = rgb(y, style);
    if (img.defined()) out = out + upsample(img);
    return {y, out};
  }
  void visit_weights(const TensorVisitor& f) {
    conv0.visit_weights(f);
    conv1.visit_weights(f);
    rgb.visit_weights(f);
  }
};

StyleBlock read_style_block(WeightReader& r, const std::string& p, int64_t in, int64_t out, int64_t style) {
  return {read_modulated(r, p + ".conv0", in, out, 3, style, false, true), read_modulated(r, p + ".conv1", out, out, 3, style, false),
          read_modulated(r, p + ".toRGB", out, 3, 1, style, true)};
}

struct Shape {
  int64_t resolution = 512, dim = 180, mlp = 360, z_dim = 512, w_dim = 512, style = 1024;
  int mapping = 8;
  int depths[kStages] = {2, 3, 4, 3, 2};
  int res_log2() const { return int(std::lround(std::log2(double(resolution)))); }
};

int64_t nf(const DetectedArch& d, int res_log2) { return int64_t(d.params.get(str("w", 1 << res_log2), 0)); }

Shape shape_of(const DetectedArch& d) {
  Shape s;
  s.resolution = int64_t(d.params.get("resolution", 512));
  s.dim = int64_t(d.params.get("dim", 180));
  s.mlp = int64_t(d.params.get("mlp", 360));
  s.z_dim = int64_t(d.params.get("z_dim", 512));
  s.w_dim = int64_t(d.params.get("w_dim", 512));
  s.style = int64_t(d.params.get("style", 1024));
  s.mapping = int(d.params.get("mapping", 8));
  for (int i = 0; i < kStages; ++i) s.depths[i] = int(d.params.get(str("d", i), s.depths[i]));
  return s;
}

class Mat : public NativeModel {
 public:
  Mat(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) : NativeModel(declared_info(d), source) {
    const Shape s = shape_of(d);
    WeightReader r(dict, source);
    NumpyRandomState rs(kSeed);
    read_mapping(r, s, rs);
    keep_first_ = keep_pattern(rs, {1, kMiddleSide * kMiddleSide, s.dim});
    keep_second_ = keep_pattern(rs, {1, nf(d, 4), kMiddleSide, kMiddleSide});
    read_first_stage(r, s);
    read_second_stage(r, d, s);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const at::Tensor rgb = input.narrow(1, 0, 3), hole = input.narrow(1, 3, 1);
    const at::Tensor image = rgb * 2 - 1, known = 1 - hole;
    const at::Tensor coarse = first_stage(image, known);
    const at::Tensor fill = second_stage(image, known, coarse);
    return (fill * 0.5 + 0.5).clamp(0, 1) * hole + rgb * known;
  }

  void visit_weights(const TensorVisitor& f) override {
    f(w_);
    f(ws_first_);
    f(add_first_);
    f(add_second_);
    f(keep_first_);
    f(keep_second_);
    conv_first_.conv.visit_weights(f);
    for (PartialConv& c : enc_conv_) c.conv.visit_weights(f);
    for (TransformerStage& t : stages_) t.visit_weights(f);
    for (StyleGanConv& c : down_conv_) c.visit_weights(f);
    to_style_first_.visit_weights(f);
    for (StyleBlock& b : dec_first_) b.visit_weights(f);
    for (auto& [a, b] : enc_) {
      a.visit_weights(f);
      b.visit_weights(f);
    }
    for (StyleGanConv& c : to_style_convs_) c.visit_weights(f);
    to_style_.visit_weights(f);
    dec16_conv0_.visit_weights(f);
    dec16_conv1_.visit_weights(f);
    dec16_rgb_.visit_weights(f);
    for (StyleBlock& b : dec_) b.visit_weights(f);
  }

 private:
  // w from the fixed z (truncation 1: w_avg is not used), and what depends on w alone: the first
  // stage's w style and both stages' mixed-in 16x16 maps.
  void read_mapping(WeightReader& r, const Shape& s, NumpyRandomState& rs) {
    at::Tensor z = at::empty({1, s.z_dim}, at::kDouble);
    double* zp = z.data_ptr<double>();
    for (int64_t i = 0; i < s.z_dim; ++i) zp[i] = rs.gauss();
    at::Tensor x = z.to(at::kFloat);
    x = x * at::rsqrt(x.square().mean(1, true) + 1e-8);
    for (int i = 0; i < s.mapping; ++i) x = read_fc(r, str("mapping.fc", i), i == 0 ? s.z_dim : s.w_dim, s.w_dim, true, 0.01)(x);
    r.recomputed("mapping.w_avg", {s.w_dim});
    w_ = x;
  }

  void read_first_stage(WeightReader& r, const Shape& s) {
    const int64_t c = s.dim;
    conv_first_ = {read_sg_conv(r, kFirst + "conv_first.conv", 4, c, 3)};
    for (int64_t side = s.resolution, i = 0; side > kTokenSide; side /= 2, ++i)
      enc_conv_.push_back({read_sg_conv(r, str(kFirst, "enc_conv.", i, ".conv"), c, c, 3, 1, 2)});
    for (int i = 0; i < kStages; ++i) {
      const std::string p = str(kFirst, "tran.", i);
      TransformerStage t;
      t.side = kStageSide[i];
      if (i == 1 || i == 2) t.resample = PartialConv{read_sg_conv(r, p + ".downsample.conv.conv", c, c, 3, 1, 2)};
      if (i > 2) t.resample = PartialConv{read_sg_conv(r, p + ".downsample.conv.conv", c, c, 3, 2, 1)};
      const int64_t win = std::min(kStageWindow[i], t.side);
      for (int j = 0; j < s.depths[i]; ++j) {
        const std::string b = str(p, ".blocks.", j);
        SwinBlock blk;
        blk.q = read_fc(r, b + ".attn.q", c, c, false).linear;
        blk.k = read_fc(r, b + ".attn.k", c, c, false).linear;
        blk.v = read_fc(r, b + ".attn.v", c, c, false).linear;
        blk.proj = read_fc(r, b + ".attn.proj", c, c, false).linear;
        blk.fuse = read_fc(r, b + ".fuse", 2 * c, c, true);
        blk.fc1 = read_fc(r, b + ".mlp.fc1", c, s.mlp, true);
        blk.fc2 = read_fc(r, b + ".mlp.fc2", s.mlp, c, false);
        blk.side = t.side;
        blk.win = win;
        blk.shift = (j % 2 == 1 && t.side > kStageWindow[i]) ? kStageWindow[i] / 2 : 0;
        if (blk.shift > 0) {
          blk.shifted = shift_mask(t.side, win, blk.shift);
          // Stored by the releases, left out by some conversions: recomputed either way.
          if (r.has(b + ".attn_mask")) r.recomputed(b + ".attn_mask", {blk.shifted.size(0), win * win, win * win});
        }
        t.blocks.push_back(std::move(blk));
      }
      t.conv = {read_sg_conv(r, p + ".conv.conv", c, c, 3)};
      stages_.push_back(std::move(t));
    }
    for (int i = 0; i < 4; ++i) down_conv_.push_back(read_sg_conv(r, str(kFirst, "down_conv.", i), c, c, 3, 1, 2));
    to_style_first_ = read_fc(r, kFirst + "to_style", c, 2 * c, true);
    ws_first_ = read_fc(r, kFirst + "ws_style", s.w_dim, c, true)(w_);
    add_first_ = read_fc(r, kFirst + "to_square", c, kMiddleSide * kMiddleSide, true)(ws_first_).unsqueeze(-1);  // [1, 256, 1]
    for (int64_t side = kTokenSide * 2, i = 0; side <= s.resolution; side *= 2, ++i)
      dec_first_.push_back(read_style_block(r, str(kFirst, "dec_conv.", i), c, c, 3 * c));
  }

  void read_second_stage(WeightReader& r, const DetectedArch& d, const Shape& s) {
    const int top = s.res_log2();
    for (int l = top; l >= 4; --l) {
      const std::string p = str("synthesis.enc.EncConv_Block_", 1 << l, "x", 1 << l);
      if (l == top) enc_.emplace_back(read_sg_conv(r, p + ".conv0", 7, nf(d, l), 1), read_sg_conv(r, p + ".conv1", nf(d, l), nf(d, l), 3));
      else enc_.emplace_back(read_sg_conv(r, p + ".conv0", nf(d, l + 1), nf(d, l), 3, 1, 2), read_sg_conv(r, p + ".conv1", nf(d, l), nf(d, l), 3));
    }
    const int64_t c16 = nf(d, 4);
    add_second_ = read_fc(r, "synthesis.to_square", s.w_dim, kMiddleSide * kMiddleSide, true)(w_).view({1, 1, kMiddleSide, kMiddleSide});
    for (int i = 0; i < 3; ++i) to_style_convs_.push_back(read_sg_conv(r, str("synthesis.to_style.conv.", i), c16, c16, 3, 1, 2));
    to_style_ = read_fc(r, "synthesis.to_style.fc", c16, s.style, true);
    const int64_t style = s.w_dim + s.style;
    dec16_conv0_ = read_sg_conv(r, "synthesis.dec.Dec_16x16.conv0", c16, c16, 3);
    dec16_conv1_ = read_modulated(r, "synthesis.dec.Dec_16x16.conv1", c16, c16, 3, style, false);
    dec16_rgb_ = read_modulated(r, "synthesis.dec.Dec_16x16.toRGB", c16, 3, 1, style, true);
    for (int l = 5; l <= top; ++l)
      dec_.push_back(read_style_block(r, str("synthesis.dec.Dec_", 1 << l, "x", 1 << l), nf(d, l - 1), nf(d, l), style));
  }

  // The coarse fill in [-1, 1], composited into the known pixels.
  at::Tensor first_stage(const at::Tensor& image, const at::Tensor& known) const {
    const int64_t n = image.size(0);
    auto [x, mask] = conv_first_(at::cat({known - 0.5, image * known}, 1), known);
    std::vector<at::Tensor> skips{x};
    for (const PartialConv& c : enc_conv_) {
      std::tie(x, mask) = c(x, mask);
      skips.push_back(x);
    }
    skips.pop_back();  // the 64x64 map goes on as tokens, not as a skip
    at::Tensor t = to_tokens(x), tm = to_tokens(mask);
    std::vector<at::Tensor> token_skips;
    at::Tensor style;
    for (int i = 0; i < kStages; ++i) {
      std::tie(t, tm) = stages_[size_t(i)](t, i < 2 ? tm : at::Tensor());
      if (i < 2) token_skips.push_back(t);
      if (i > 2) t = t + token_skips[size_t(4 - i)];
      if (i == 2) {
        const at::Tensor keep = keep_first_.expand({n, -1, -1});
        t = t * keep + add_first_ * (1 - keep);
        at::Tensor g = to_map(t, kMiddleSide);
        for (const StyleGanConv& c : down_conv_) g = c(g);
        style = at::cat({to_style_first_(g.mean({2, 3})), ws_first_.expand({n, -1})}, 1);
      }
    }
    x = to_map(t, kTokenSide).contiguous(infer::activation_format(image.device()));
    at::Tensor img;
    for (size_t i = 0; i < dec_first_.size(); ++i) std::tie(x, img) = dec_first_[i](x, img, style, skips[skips.size() - 1 - i]);
    return img * (1 - known) + image * known;
  }

  // The final fill in [-1, 1] (before upstream's last composite, which run() makes in [0, 1]).
  at::Tensor second_stage(const at::Tensor& image, const at::Tensor& known, const at::Tensor& coarse) const {
    const int64_t n = image.size(0);
    at::Tensor x = at::cat({known - 0.5, image * known + coarse * (1 - known), image * known}, 1);
    std::vector<at::Tensor> features;  // R, R/2, ..., 16
    for (const auto& [a, b] : enc_) {
      x = b(a(x));
      features.push_back(x);
    }
    const at::Tensor keep = keep_second_.expand({n, -1, -1, -1});
    const at::Tensor f16 = features.back() * keep + add_second_ * (1 - keep);
    at::Tensor g = f16;
    for (const StyleGanConv& c : to_style_convs_) g = c(g);
    const at::Tensor style = at::cat({w_.expand({n, -1}), to_style_(g.mean({2, 3}))}, 1);
    x = dec16_conv1_(dec16_conv0_(f16) + f16, style);
    at::Tensor img = dec16_rgb_(x, style);
    for (size_t i = 0; i < dec_.size(); ++i) std::tie(x, img) = dec_[i](x, img, style, features[features.size() - 2 - i]);
    return img;
  }

  at::Tensor w_, ws_first_, add_first_, add_second_, keep_first_, keep_second_;
  PartialConv conv_first_;
  std::vector<PartialConv> enc_conv_;
  std::vector<TransformerStage> stages_;
  std::vector<StyleGanConv> down_conv_;
  Fc to_style_first_;
  std::vector<StyleBlock> dec_first_;
  std::vector<std::pair<StyleGanConv, StyleGanConv>> enc_;
  std::vector<StyleGanConv> to_style_convs_;
  Fc to_style_;
  StyleGanConv dec16_conv0_;
  ModulatedConv dec16_conv1_, dec16_rgb_;
  std::vector<StyleBlock> dec_;
};

// spandrel's "model." prefix (its MAT wrapper's) off, as the releases store the Generator's keys.
weights::StateDict generator_keys(const weights::StateDict& dict) {
  if (!dict.count("model." + kFirst + "conv_first.conv.resample_filter")) return dict;
  weights::StateDict out;
  for (const auto& [key, t] : dict) out[key.rfind("model.", 0) == 0 ? key.substr(6) : key] = t;
  return out;
}

std::optional<DetectedArch> detect(const weights::StateDict& raw, const std::string& source) {
  if (!raw.count(kFirst + "conv_first.conv.resample_filter") && !raw.count("model." + kFirst + "conv_first.conv.resample_filter"))
    return std::nullopt;
  const weights::StateDict dict = generator_keys(raw);
  const auto fail = [&](const std::string& what) { return Error(ErrorKind::Model, str(source, ": MAT layout: ", what)); };
  const auto dim = dim_of(dict, kFirst + "conv_first.conv.weight", 4, 0), in = dim_of(dict, kFirst + "conv_first.conv.weight", 4, 1);
  if (!dim || !in) throw fail("synthesis.first_stage.conv_first.conv.weight is not a convolution");
  if (*in != 4) throw fail(str("the first convolution takes ", *in, " channels, not an RGB image's 3 and the mask"));
  int downs = 0;
  while (dict.count(str(kFirst, "enc_conv.", downs, ".conv.weight"))) ++downs;
  if (downs < 1 || downs > 6) throw fail(str(downs, " first-stage convolutions down to 64x64 (1 to 6: a 128 to 4096 px synthesis)"));
  const int64_t resolution = kTokenSide << downs;
  DetectedArch d;
  d.arch = "mat";
  d.in_channels = 4;  // RGB and the mask
  d.out_channels = 3;
  d.params = {{"resolution", double(resolution)}, {"dim", double(*dim)}};
  for (int i = 0; i < kStages; ++i) {
    int blocks = 0;
    while (dict.count(str(kFirst, "tran.", i, ".blocks.", blocks, ".attn.q.weight"))) ++blocks;
    if (blocks == 0) throw fail(str("no attention blocks in synthesis.first_stage.tran.", i));
    d.params[str("d", i)] = blocks;
  }
  const auto mlp = dim_of(dict, kFirst + "tran.0.blocks.0.mlp.fc1.weight", 2, 0);
  const auto w_dim = dim_of(dict, "mapping.fc0.weight", 2, 0), z_dim = dim_of(dict, "mapping.fc0.weight", 2, 1);
  const auto style = dim_of(dict, "synthesis.to_style.fc.weight", 2, 0);
  if (!mlp || !w_dim || !z_dim || !style) throw fail("no MLP, mapping network or style layer (mlp.fc1, mapping.fc0, synthesis.to_style.fc)");
  int mapping = 0;
  while (dict.count(str("mapping.fc", mapping, ".weight"))) ++mapping;
  d.params["mlp"] = double(*mlp);
  d.params["z_dim"] = double(*z_dim);
  d.params["w_dim"] = double(*w_dim);
  d.params["style"] = double(*style);
  d.params["mapping"] = mapping;
  // The second stage's widths by resolution (upstream's nf(): 64 at 512, 128 at 256, 256 at 128, 512 below).
  for (int64_t res = resolution; res >= 16; res /= 2) {
    const auto w = dim_of(dict, str("synthesis.enc.EncConv_Block_", res, "x", res, ".conv0.weight"), 4, 0);
    if (!w || *w < 1 || *w > kMaxWidth) throw fail(str("synthesis.enc.EncConv_Block_", res, "x", res, " has no usable width"));
    d.params[str("w", res)] = double(*w);
  }
  return d;
}

}  // namespace

Architecture mat_architecture() {
  return {"mat", detect, [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return exact_size_only(std::make_unique<Mat>(generator_keys(dict), d, source), source, "fills", "images");
          }};
}

}  // namespace framelift::models
