// GFPGAN (Wang et al. 2021, "Towards Real-World Blind Face Restoration with Generative Facial
// Prior") in the clean layout of its v1.2, v1.3 and v1.4 releases (GFPGANv1Clean, as spandrel
// loads them: face size 512, styles of 512, channel multiplier 2, SFT on half the channels, one
// latent per layer). A face restorer (models/face_restorer.h): one aligned S x S crop in, the
// restored crop out.
//
// A U-Net encodes the crop (a 1x1, then ResBlocks of two 3x3s around a bilinear halving with a
// resized 1x1 skip, down to 4x4, a 3x3); a linear layer of the bottom gives the style codes; the
// way back up (the same blocks doubling, the encoder's features added) gives at each level an
// SFT scale and shift (two 3x3s each). A StyleGAN2 decoder starts from a learned 4x4 map: at each
// level a bilinear x2, a modulated 3x3 (weights scaled per input channel by the level's style,
// then demodulated per output channel), the SFT applied to the upper half of its channels (or to
// all), a second modulated 3x3, each followed by noise, a bias and LeakyReLU, and a modulated 1x1
// to RGB added to the previous level's RGB resized x2.
//
// The noise: upstream's forward draws it afresh on every call unless randomize_noise=False, so a
// face would restore differently in every frame of a video and no result would reproduce. This
// network always adds the noise maps the weights hold (stylegan_decoder.noises.noiseN), which is
// what upstream does with randomize_noise=False; the references are made that way.
//
// The checkpoint's style MLP (StyleGAN2's mapping network) and the U-Net's intermediate toRGB
// layers are training-time parts: the codes go to the decoder as latents and the intermediate
// images are not the output. They are checked and left unused.
#include <ATen/ATen.h>

#include <cmath>

#include "arch/declaration.h"
#include "infer/fp32_islands.h"
#include "models/builtin_architectures.h"
#include "models/face_restorer.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "models/token_layers.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kMaxWidth = 8192;
constexpr int kMaxLevels = 8;  // 4 * 2^8 = 1024, the largest size upstream's channel table has
constexpr double kSlope = 0.2;

const std::string kDec = "stylegan_decoder.";

at::Tensor lrelu(const at::Tensor& x) { return at::leaky_relu(x, kSlope); }

// F.interpolate(scale_factor=factor, mode="bilinear", align_corners=False).
at::Tensor bilinear(const at::Tensor& x, double factor) {
  const int64_t h = int64_t(double(x.size(2)) * factor), w = int64_t(double(x.size(3)) * factor);
  return infer::upsample_bilinear2d(x, {h, w}, false, factor, factor);
}

// What the shapes say. Widths are per level l = 0..levels (resolution 4 * 2^l): read off each
// level's own layers, since upstream's table rounds `narrow` per level.
struct Shape {
  int levels = 7;
  int64_t face = 512, style = 512, condition = 256;  // condition: the SFT maps' channels at level 1
  std::vector<int64_t> unet, synth;
  bool sft_half = true, different_w = true;
  int mlp = 8;
  int64_t latents() const { return 2 * int64_t(levels) + 2; }
};

Error layout_error(const std::string& source, const std::string& what) {
  return Error(ErrorKind::Model, str(source, ": GFPGAN layout: ", what));
}

int64_t width_of(const weights::StateDict& dict, const std::string& key, int64_t rank, int64_t axis, const std::string& source) {
  const auto d = dim_of(dict, key, rank, axis);
  if (!d) throw layout_error(source, str("missing tensor ", key, " (or not of rank ", rank, ")"));
  if (*d < 1 || *d > kMaxWidth) throw layout_error(source, str(key, " is ", *d, " wide on axis ", axis, " (1 to ", kMaxWidth, ")"));
  return *d;
}

Shape shape_of(const weights::StateDict& dict, const std::string& source) {
  Shape s;
  s.levels = int(key_indices(dict, "conv_body_down.").size());
  if (s.levels < 1 || s.levels > kMaxLevels) throw layout_error(source, str(s.levels, " conv_body_down blocks (1 to ", kMaxLevels, ")"));
  const auto count = [&](const std::string& prefix, size_t want) {
    const size_t n = key_indices(dict, prefix).size();
    if (n != want) throw layout_error(source, str(n, " ", prefix.substr(0, prefix.size() - 1), " layers for ", s.levels, " conv_body_down blocks (", want, ")"));
  };
  count("conv_body_up.", size_t(s.levels));
  count("condition_scale.", size_t(s.levels));
  count("condition_shift.", size_t(s.levels));
  count(kDec + "style_convs.", size_t(2 * s.levels));
  count(kDec + "to_rgbs.", size_t(s.levels));
  s.face = int64_t(4) << s.levels;
  s.unet.resize(size_t(s.levels + 1));
  s.synth.resize(size_t(s.levels + 1));
  s.unet[size_t(s.levels)] = width_of(dict, "conv_body_first.weight", 4, 0, source);
  for (int l = 0; l < s.levels; ++l)  // block k halves to level levels - 1 - k
    s.unet[size_t(l)] = width_of(dict, str("conv_body_down.", s.levels - 1 - l, ".conv2.weight"), 4, 0, source);
  s.synth[0] = width_of(dict, kDec + "constant_input.weight", 4, 1, source);
  for (int l = 1; l <= s.levels; ++l)
    s.synth[size_t(l)] = width_of(dict, str(kDec, "style_convs.", 2 * (l - 1), ".modulated_conv.weight"), 5, 1, source);
  s.style = width_of(dict, kDec + "style_conv1.modulated_conv.modulation.weight", 2, 1, source);
  s.condition = width_of(dict, "condition_scale.0.2.weight", 4, 0, source);
  s.sft_half = s.condition != s.synth[1];
  for (int l = 1; l <= s.levels; ++l) {
    const int64_t c = s.synth[size_t(l)];
    if (s.sft_half && c % 2) throw layout_error(source, str("SFT on half of ", c, " decoder channels at ", 4 << l, "x", 4 << l));
  }
  if (s.sft_half && s.condition * 2 != s.synth[1])
    throw layout_error(source, str("condition_scale.0.2 makes ", s.condition, " maps for ", s.synth[1], " decoder channels (all or half of them)"));
  const int64_t codes = width_of(dict, "final_linear.weight", 2, 0, source);
  s.different_w = codes != s.style;
  if (s.different_w && codes != s.latents() * s.style)
    throw layout_error(source, str("final_linear makes ", codes, " style values: neither one style of ", s.style, " nor ", s.latents(), " of them"));
  s.mlp = int(key_indices(dict, kDec + "style_mlp.").size());
  return s;
}

// ModulatedConv2d: the weight scaled per input channel by modulation(style), demodulated per
// output channel when `demodulate` (rsqrt of its squares' sum + 1e-8), times `gain`; each image
// of a batch has its own weights.
struct Modulated {
  Linear modulation;  // style -> input channels
  at::Tensor weight;  // [out, in, k, k]
  bool demodulate = true, upsample = false;
  double gain = 1;
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& style) const {
    const at::Tensor s = modulation(style);  // [N, in]
    const at::Tensor input = upsample ? bilinear(x, 2) : x;
    std::vector<at::Tensor> out;
    for (int64_t n = 0; n < x.size(0); ++n) {
      at::Tensor w = weight * s[n].view({1, -1, 1, 1});
      if (demodulate) w = w * at::rsqrt(w.pow(2).sum({1, 2, 3}, true) + 1e-8);
      if (gain != 1) w = w * gain;
      out.push_back(Conv2d{w, {}, 1, weight.size(2) / 2}(input.narrow(0, n, 1)));
    }
    return out.size() == 1 ? out[0] : at::cat(out, 0);
  }
  void visit_weights(const TensorVisitor& f) {
    modulation.visit_weights(f);
    f(weight);
  }
};

Modulated read_modulated(WeightReader& r, const std::string& p, int64_t style, int64_t in, int64_t out, int64_t k) {
  Modulated m;
  m.modulation = read_linear(r, p + ".modulation", style, in);
  m.weight = r.tensor(p + ".weight", {1, out, in, k, k}).squeeze(0);
  return m;
}

// StyleConv: the modulated 3x3 (its sqrt 2 gain folded into the weights), the stored noise map
// times its strength, a bias, LeakyReLU.
struct StyleConv {
  Modulated conv;
  at::Tensor noise, bias;  // [1, 1, r, r] already scaled; [1, C, 1, 1]
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& style) const { return lrelu(conv(x, style) + noise + bias); }
};

StyleConv read_style_conv(WeightReader& r, const std::string& p, const std::string& noise, int64_t style, int64_t in, int64_t out,
                          int64_t size, bool upsample) {
  StyleConv c;
  c.conv = read_modulated(r, p + ".modulated_conv", style, in, out, 3);
  c.conv.upsample = upsample;
  c.conv.gain = std::sqrt(2.0);
  c.noise = r.tensor(p + ".weight", {1}) * r.tensor(kDec + "noises." + noise, {1, 1, size, size});
  c.bias = r.tensor(p + ".bias", {1, out, 1, 1});
  return c;
}

struct ToRgb {
  Modulated conv;  // 1x1 to 3, not demodulated
  at::Tensor bias;
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& style, const at::Tensor& previous) const {
    const at::Tensor y = conv(x, style) + bias;
    return previous.defined() ? y + bilinear(previous, 2) : y;
  }
};

ToRgb read_to_rgb(WeightReader& r, const std::string& p, int64_t style, int64_t in) {
  ToRgb t;
  t.conv = read_modulated(r, p + ".modulated_conv", style, in, 3, 1);
  t.conv.demodulate = false;
  t.bias = r.tensor(p + ".bias", {1, 3, 1, 1});
  return t;
}

// The U-Net's block: two 3x3 with LeakyReLU around the resize, plus the input resized through a 1x1.
struct ResBlock {
  Conv2d conv1, conv2, skip;
  double factor = 0.5;
  at::Tensor operator()(const at::Tensor& x) const {
    const at::Tensor y = lrelu(conv2(bilinear(lrelu(conv1(x)), factor)));
    return y + skip(bilinear(x, factor));
  }
};

ResBlock read_res_block(WeightReader& r, const std::string& p, int64_t in, int64_t out, double factor) {
  return {read_conv(r, p + ".conv1", in, in, 3), read_conv(r, p + ".conv2", in, out, 3), read_conv(r, p + ".skip", in, out, 1, 1, 0, false),
          factor};
}

struct Condition {  // conv 3x3, LeakyReLU, conv 3x3
  Conv2d a, b;
  at::Tensor operator()(const at::Tensor& x) const { return b(lrelu(a(x))); }
};

class Gfpgan : public NativeModel {
 public:
  Gfpgan(const weights::StateDict& dict, const DetectedArch& d, const std::string& source)
      : NativeModel(declared_info(d), source), shape_(shape_of(dict, source)) {
    const Shape& s = shape_;
    WeightReader r(dict, source);
    const auto u = [&](int l) { return s.unet[size_t(l)]; };
    const auto c = [&](int l) { return s.synth[size_t(l)]; };
    first_ = read_conv(r, "conv_body_first", 3, u(s.levels), 1);
    for (int k = 0; k < s.levels; ++k)
      down_.push_back(read_res_block(r, str("conv_body_down.", k), u(s.levels - k), u(s.levels - 1 - k), 0.5));
    final_conv_ = read_conv(r, "final_conv", u(0), u(0), 3);
    final_linear_ = read_linear(r, "final_linear", u(0) * 16, s.different_w ? s.latents() * s.style : s.style);
    for (int j = 0; j < s.levels; ++j) {
      const int64_t in = u(j), out = u(j + 1), sft = s.sft_half ? c(j + 1) / 2 : c(j + 1);
      up_.push_back(read_res_block(r, str("conv_body_up.", j), in, out, 2));
      const auto condition = [&](const std::string& p) { return Condition{read_conv(r, p + ".0", out, out, 3), read_conv(r, p + ".2", out, sft, 3)}; };
      scale_.push_back(condition(str("condition_scale.", j)));
      shift_.push_back(condition(str("condition_shift.", j)));
      r.recomputed(str("toRGB.", j, ".weight"), {3, out, 1, 1});  // the intermediate images: not the output
      r.recomputed(str("toRGB.", j, ".bias"), {3});
    }
    read_decoder(r);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const Shape& s = shape_;
    at::Tensor feat = lrelu(first_((input - 0.5) * 2));
    std::vector<at::Tensor> skips;
    for (const ResBlock& b : down_) skips.insert(skips.begin(), feat = b(feat));
    feat = lrelu(final_conv_(feat));
    const int64_t n = input.size(0);
    const at::Tensor codes = final_linear_(feat.flatten(1));
    const auto latent = [&](int64_t i) { return s.different_w ? codes.narrow(1, i * s.style, s.style) : codes; };
    std::vector<at::Tensor> scales, shifts;
    for (size_t j = 0; j < up_.size(); ++j) {
      feat = up_[j](feat + skips[j]);
      scales.push_back(scale_[j](feat));
      shifts.push_back(shift_[j](feat));
    }
    at::Tensor out = style_conv1_(constant_.expand({n, -1, -1, -1}), latent(0));
    at::Tensor rgb = to_rgb1_(out, latent(1), {});
    for (size_t j = 0; j < up_.size(); ++j) {
      const int64_t i = 2 * int64_t(j) + 1;
      out = sft(style_convs_[2 * j](out, latent(i)), scales[j], shifts[j]);
      out = style_convs_[2 * j + 1](out, latent(i + 1));
      rgb = to_rgbs_[j](out, latent(i + 2), rgb);
    }
    return (rgb + 1) * 0.5;
  }

  void visit_weights(const TensorVisitor& f) override {
    const auto block = [&](ResBlock& b) {
      visit(b.conv1, f);
      visit(b.conv2, f);
      visit(b.skip, f);
    };
    visit(first_, f);
    for (ResBlock& b : down_) block(b);
    visit(final_conv_, f);
    final_linear_.visit_weights(f);
    for (ResBlock& b : up_) block(b);
    for (auto* conditions : {&scale_, &shift_})
      for (Condition& k : *conditions) {
        visit(k.a, f);
        visit(k.b, f);
      }
    f(constant_);
    for (StyleConv* sc : style_conv_pointers()) {
      sc->conv.visit_weights(f);
      f(sc->noise);
      f(sc->bias);
    }
    for (ToRgb* t : to_rgb_pointers()) {
      t->conv.visit_weights(f);
      f(t->bias);
    }
  }

 private:
  void read_decoder(WeightReader& r) {
    const Shape& s = shape_;
    const int64_t f = s.style;
    constant_ = r.tensor(kDec + "constant_input.weight", {1, s.synth[0], 4, 4});
    style_conv1_ = read_style_conv(r, kDec + "style_conv1", "noise0", f, s.synth[0], s.synth[0], 4, false);
    to_rgb1_ = read_to_rgb(r, kDec + "to_rgb1", f, s.synth[0]);
    for (int j = 0; j < s.levels; ++j) {
      const int64_t in = s.synth[size_t(j)], out = s.synth[size_t(j + 1)], size = int64_t(8) << j;
      style_convs_.push_back(read_style_conv(r, str(kDec, "style_convs.", 2 * j), str("noise", 2 * j + 1), f, in, out, size, true));
      style_convs_.push_back(read_style_conv(r, str(kDec, "style_convs.", 2 * j + 1), str("noise", 2 * j + 2), f, out, out, size, false));
      to_rgbs_.push_back(read_to_rgb(r, str(kDec, "to_rgbs.", j), f, out));
    }
    for (int i = 0; i < s.mlp; ++i) {  // the mapping network: the codes are latents already
      r.recomputed(str(kDec, "style_mlp.", 2 * i + 1, ".weight"), {f, f});
      r.recomputed(str(kDec, "style_mlp.", 2 * i + 1, ".bias"), {f});
    }
  }

  at::Tensor sft(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& shift) const {
    if (!shape_.sft_half) return at::addcmul(shift, x, scale);
    const int64_t half = x.size(1) / 2;
    return at::cat({x.narrow(1, 0, half), at::addcmul(shift, x.narrow(1, half, half), scale)}, 1);
  }

  std::vector<StyleConv*> style_conv_pointers() {
    std::vector<StyleConv*> out{&style_conv1_};
    for (StyleConv& sc : style_convs_) out.push_back(&sc);
    return out;
  }
  std::vector<ToRgb*> to_rgb_pointers() {
    std::vector<ToRgb*> out{&to_rgb1_};
    for (ToRgb& t : to_rgbs_) out.push_back(&t);
    return out;
  }

  Shape shape_;
  Conv2d first_, final_conv_;
  std::vector<ResBlock> down_, up_;
  Linear final_linear_;
  std::vector<Condition> scale_, shift_;
  at::Tensor constant_;
  StyleConv style_conv1_;
  std::vector<StyleConv> style_convs_;
  ToRgb to_rgb1_;
  std::vector<ToRgb> to_rgbs_;
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  // GFPGANv1.pth (and the bilinear variant, whose keys are the same): StyleGAN2's EqualConv2d
  // layers and fused activations with their own biases.
  if (has_keys(dict, {"conv_body_first.0.weight", "final_linear.weight", kDec + "style_conv1.activate.bias"}))
    throw layout_error(source, "the original GFPGANv1 (or GFPGANBilinear) layout is not supported; v1.2, v1.3 and v1.4 (the clean layout) are");
  if (!has_keys(dict, {"conv_body_first.weight", "final_linear.weight", "condition_scale.0.0.weight", kDec + "style_mlp.1.weight"}))
    return std::nullopt;
  const Shape s = shape_of(dict, source);
  DetectedArch d;
  d.arch = "gfpgan";
  d.scale = 1;
  d.params["face_size"] = double(s.face);
  d.params["num_style_feat"] = double(s.style);
  d.params["width"] = double(s.synth[0]);
  // Upstream's table: 512 narrow up to 32, 256 multiplier narrow at 64 (2 when the crop is smaller).
  d.params["channel_multiplier"] = s.levels >= 4 ? 2.0 * double(s.synth[4]) / double(s.synth[0]) : 2.0;
  d.params["sft_half"] = s.sft_half ? 1 : 0;
  d.params["different_w"] = s.different_w ? 1 : 0;
  d.params["num_mlp"] = double(s.mlp);
  return d;
}

}  // namespace

Architecture gfpgan_architecture() {
  return {"gfpgan", detect, [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return face_crops_only(std::make_unique<Gfpgan>(dict, d, source), source);
          }};
}

}  // namespace framelift::models
