// LaMa (Suvorov et al. 2022, "Resolution-robust Large Mask Inpainting with Fourier Convolutions"):
// the FFCResNetGenerator of advimman/lama as big-lama ships it, which the object-removal guides
// use. The input is the frame with its hole blanked plus the mask; a 7x7 convolution, stride-2
// 3x3 convolutions down, residual blocks of fast Fourier convolutions (FFC) at the bottom,
// transposed convolutions up and a 7x7 to RGB with a sigmoid. The fill is composited into the
// frame where the mask is 1, as spandrel's LaMa wrapper does.
//
// An FFC splits its channels into a local part (3x3 convolutions) and a global part (a spectral
// transform: 1x1 down, a Fourier unit - real FFT of the whole map, a 1x1 convolution over the
// real and imaginary parts, inverse FFT - added to its input, 1x1 up). Every convolution is
// reflection-padded and bias-free, each FFC's two sums are followed by BatchNorm and ReLU. The
// FFT covers the whole frame, so the network runs untiled, and in fp32 whatever the run's
// precision (no reduced-precision FFT on the CPU; cuFFT's half wants powers of two).
//
// Layout (spandrel's keys "model.model.N", or "generator.model.N" of the training checkpoint,
// whose discriminator and evaluator tensors are not the generator's and are left alone):
// 1 init FFC (convl2l [ngf, 4, 7, 7], bn_l), 2..1+D downsampling FFCs (the last one splits into
// local and global: convl2l, convl2g, bn_l, bn_g), then B blocks (conv1, conv2: convl2l, convl2g,
// convg2l, convg2g.{conv1.0, conv1.1, fu.conv_layer, fu.bn, conv2}, bn_l, bn_g), the concat, D
// (ConvTranspose2d, BatchNorm) pairs, and the 7x7 convolution. Published: ngf 64, D 3, B 18,
// bottleneck 512 of which 384 global.
//
// Input [N, 4, H, W]: RGB in [0, 1] and the mask (1: fill); output [N, 3, H, W]. H and W are
// multiples of 2^D (the transposed convolutions' output_padding restores only even sizes).
#include <ATen/ATen.h>

#include "arch/declaration.h"
#include "infer/conv_layout.h"
#include "infer/fp32_islands.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int64_t kMaxWidth = 4096;

std::string layer(int i) { return str("model.model.", i); }

// `conv` (bias-free) scaled by a following BatchNorm; its shift becomes the bias when `with_shift`
// (of the two convolutions summed before one norm, one carries it).
Conv2d folded(Conv2d conv, const BatchNorm2d& bn, bool with_shift) {
  conv.weight = conv.weight * bn.scale.view({-1, 1, 1, 1});
  if (with_shift) conv.bias = bn.shift;
  return conv;
}

Conv2d read_plain(WeightReader& r, const std::string& p, int64_t in, int64_t out, int64_t k, int64_t stride = 1) {
  return read_conv(r, p, in, out, k, stride, 0, false);
}

at::Tensor reflect(const at::Tensor& x, int64_t pad) { return infer::reflect_pad2d(x, {pad, pad, pad, pad}); }

// The Fourier unit: a 1x1 convolution (and BatchNorm, ReLU) over the real FFT's real and
// imaginary parts, interleaved per channel as upstream stacks them. Always fp32.
struct FourierUnit {
  Conv2d conv;  // [2C, 2C, 1, 1] with the norm folded in
  at::Tensor operator()(const at::Tensor& x) const {
    const at::Tensor xf = x.to(at::kFloat).contiguous();
    const int64_t n = xf.size(0), c = xf.size(1), h = xf.size(2), w = xf.size(3);
    const at::Tensor spectrum = at::view_as_real(at::fft_rfftn(xf, c10::nullopt, at::IntArrayRef{-2, -1}, "ortho"));
    const int64_t wf = spectrum.size(3);
    at::Tensor y = spectrum.permute({0, 1, 4, 2, 3}).reshape({n, 2 * c, h, wf});
    y = at::relu(at::conv2d(y, conv.weight.to(y.options()), conv.bias.to(y.options())));
    y = y.view({n, c, 2, h, wf}).permute({0, 1, 3, 4, 2}).contiguous();
    const at::Tensor out = at::fft_irfftn(at::view_as_complex(y), at::IntArrayRef{h, w}, at::IntArrayRef{-2, -1}, "ortho");
    return out.to(x.scalar_type()).contiguous(infer::activation_format(x.device()));
  }
};

// The global-to-global path: 1x1 to half (norm, ReLU), plus its Fourier unit, 1x1 back.
struct SpectralTransform {
  Conv2d down, up;
  FourierUnit fu;
  at::Tensor operator()(const at::Tensor& x) const {
    const at::Tensor h = at::relu(down(x));
    return up(h + fu(h));
  }
};

// One FFC with its norms and ReLUs, local and global parts each in and out (a part of zero
// channels is an undefined tensor). Norm scales are folded into the convolutions feeding them.
struct Ffc {
  int64_t pad = 0;
  std::optional<Conv2d> l2l, l2g, g2l;
  std::optional<SpectralTransform> g2g;
  std::pair<at::Tensor, at::Tensor> operator()(const at::Tensor& local, const at::Tensor& global) const {
    const at::Tensor pl = reflect(local, pad);
    at::Tensor out_l = (*l2l)(pl);
    if (g2l) out_l = out_l + (*g2l)(reflect(global, pad));
    at::Tensor out_g;
    if (l2g) {
      out_g = (*l2g)(pl);
      if (g2g) out_g = out_g + (*g2g)(global);
      out_g = at::relu(out_g);
    }
    return {at::relu(out_l), out_g};
  }
};

struct Widths {
  int64_t in = 0, local = 0, global = 0;  // a layer's input, and its output's two parts
};

// An FFC_BN_ACT of upstream at index/prefix `p`: `in_l`/`in_g` channels in, `out_l`/`out_g` out.
Ffc read_ffc(WeightReader& r, const std::string& p, int64_t in_l, int64_t in_g, int64_t out_l, int64_t out_g, int64_t k,
             int64_t stride, int64_t pad) {
  Ffc f;
  f.pad = pad;
  const BatchNorm2d bn_l = read_batch_norm(r, p + ".bn_l", out_l);
  f.l2l = folded(read_plain(r, p + ".ffc.convl2l", in_l, out_l, k, stride), bn_l, true);
  if (in_g > 0) f.g2l = folded(read_plain(r, p + ".ffc.convg2l", in_g, out_l, k, stride), bn_l, false);
  if (out_g > 0) {
    const BatchNorm2d bn_g = read_batch_norm(r, p + ".bn_g", out_g);
    f.l2g = folded(read_plain(r, p + ".ffc.convl2g", in_l, out_g, k, stride), bn_g, true);
    if (in_g > 0) {
      const std::string s = p + ".ffc.convg2g";
      SpectralTransform t;
      t.down = folded(read_plain(r, s + ".conv1.0", in_g, out_g / 2, 1), read_batch_norm(r, s + ".conv1.1", out_g / 2), true);
      t.fu.conv = folded(read_plain(r, s + ".fu.conv_layer", out_g, out_g, 1), read_batch_norm(r, s + ".fu.bn", out_g), true);
      t.up = folded(read_plain(r, s + ".conv2", out_g / 2, out_g, 1), bn_g, false);
      f.g2g = t;
    }
  }
  return f;
}

struct UpStep {
  at::Tensor weight, bias;  // ConvTranspose2d k3 s2 p1 output_padding 1, its norm folded in
};

struct LamaShape {
  int64_t in = 4, ngf = 64, local = 128, global = 384;
  int downs = 3, blocks = 18;
  int64_t out = 3;
};

class Lama : public NativeModel {
 public:
  Lama(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) : NativeModel(declared_info(d), source) {
    const LamaShape s = shape_of(d);
    WeightReader r(dict, source);
    head_ = read_ffc(r, layer(1), s.in, 0, s.ngf, 0, 7, 1, 0);
    int64_t c = s.ngf;
    for (int i = 0; i < s.downs; ++i) {
      const bool last = i == s.downs - 1;
      const int64_t out_l = last ? s.local : int64_t(d.params.get(str("w", i + 1), double(c * 2)));
      downs_.push_back(read_ffc(r, layer(2 + i), c, 0, out_l, last ? s.global : 0, 3, 2, 1));
      c = out_l;
    }
    for (int b = 0; b < s.blocks; ++b) {
      const std::string p = layer(2 + s.downs + b);
      blocks_.push_back({read_ffc(r, p + ".conv1", s.local, s.global, s.local, s.global, 3, 1, 1),
                         read_ffc(r, p + ".conv2", s.local, s.global, s.local, s.global, 3, 1, 1)});
    }
    c = s.local + s.global;
    int index = 3 + s.downs + s.blocks;
    for (int i = 0; i < s.downs; ++i, index += 3) {
      const int64_t out = i == s.downs - 1 ? s.ngf : int64_t(d.params.get(str("w", s.downs - 1 - i), double(c / 2)));
      const ConvTranspose2d t = read_deconv(r, layer(index), c, out, 3, 2, 1);
      const BatchNorm2d bn = read_batch_norm(r, layer(index + 1), out);
      ups_.push_back({t.weight * bn.scale.view({1, -1, 1, 1}), t.bias * bn.scale + bn.shift});
      c = out;
    }
    tail_ = read_conv(r, layer(index + 1), s.ngf, s.out, 7, 1, 0);
    r.expect_all_used();
  }

  static LamaShape shape_of(const DetectedArch& d) {
    LamaShape s;
    s.in = d.in_channels;
    s.out = d.out_channels;
    s.ngf = int64_t(d.params.get("ngf", 64));
    s.local = int64_t(d.params.get("local", 128));
    s.global = int64_t(d.params.get("global", 384));
    s.downs = int(d.params.get("downs", 3));
    s.blocks = int(d.params.get("blocks", 18));
    return s;
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const at::Tensor image = input.narrow(1, 0, input.size(1) - 1), mask = input.narrow(1, input.size(1) - 1, 1);
    const at::Tensor masked = image * (1 - mask);
    auto [l, g] = head_(reflect(at::cat({masked, mask}, 1), 3), at::Tensor());
    for (const Ffc& f : downs_) std::tie(l, g) = f(l, g);
    for (const auto& [conv1, conv2] : blocks_) {
      auto [l1, g1] = conv1(l, g);
      auto [l2, g2] = conv2(l1, g1);
      l = l + l2;
      g = g + g2;
    }
    at::Tensor y = at::cat({l, g}, 1);
    for (const UpStep& u : ups_) y = at::relu(infer::conv_transpose2d(y, u.weight, u.bias, {2, 2}, {1, 1}, {1, 1}, 1, {1, 1}));
    const at::Tensor fill = at::sigmoid(tail_(reflect(y, 3)));
    return mask * fill + (1 - mask) * image;
  }

  void visit_weights(const TensorVisitor& f) override {
    const auto ffc = [&](Ffc& x) {
      for (std::optional<Conv2d>* c : {&x.l2l, &x.l2g, &x.g2l})
        if (*c) visit(**c, f);
      if (x.g2g) {
        visit(x.g2g->down, f);
        visit(x.g2g->up, f);
        visit(x.g2g->fu.conv, f);
      }
    };
    ffc(head_);
    for (Ffc& x : downs_) ffc(x);
    for (auto& [a, b] : blocks_) {
      ffc(a);
      ffc(b);
    }
    for (UpStep& u : ups_) {
      f(u.weight);
      f(u.bias);
    }
    visit(tail_, f);
  }

 private:
  Ffc head_;
  std::vector<Ffc> downs_;
  std::vector<std::pair<Ffc, Ffc>> blocks_;
  std::vector<UpStep> ups_;
  Conv2d tail_;
};

// The training checkpoint's "generator.model.N" keys as spandrel's "model.model.N"; its other
// parts (discriminator, evaluators, losses) are not the network's.
weights::StateDict generator_keys(const weights::StateDict& dict) {
  const bool training = dict.count("generator.model.1.bn_l.running_mean") != 0;
  if (!training) return dict;
  weights::StateDict out;
  for (const auto& [key, t] : dict)
    if (key.rfind("generator.model.", 0) == 0) out["model.model." + key.substr(16)] = t;
  return out;
}

std::optional<int64_t> out_of(const weights::StateDict& dict, const std::string& key) { return dim_of(dict, key, 4, 0); }

std::optional<DetectedArch> detect(const weights::StateDict& raw, const std::string& source) {
  if (!raw.count("model.model.1.bn_l.running_mean") && !raw.count("generator.model.1.bn_l.running_mean")) return std::nullopt;
  const weights::StateDict dict = generator_keys(raw);
  const auto fail = [&](const std::string& what) { return Error(ErrorKind::Model, str(source, ": LaMa layout: ", what)); };
  const auto ngf = out_of(dict, layer(1) + ".ffc.convl2l.weight"), in = dim_of(dict, layer(1) + ".ffc.convl2l.weight", 4, 1);
  if (!ngf || !in) throw fail("model.model.1.ffc.convl2l is not a convolution");
  int downs = 0;
  while (dict.count(layer(2 + downs) + ".ffc.convl2l.weight")) ++downs;
  int blocks = 0;
  while (dict.count(layer(2 + downs + blocks) + ".conv1.ffc.convl2l.weight")) ++blocks;
  if (downs < 1 || downs > 6) throw fail(str(downs, " downsampling layers (1 to 6)"));
  if (blocks < 1 || blocks > 64) throw fail(str(blocks, " FFC residual blocks after the downsampling (1 to 64)"));
  const std::string last = layer(1 + downs) + ".ffc";
  const auto local = out_of(dict, last + ".convl2l.weight"), global = out_of(dict, last + ".convl2g.weight");
  if (!local || !global) throw fail(str(last, " has no local and global outputs (convl2l, convl2g)"));
  const int tail = 3 + downs + blocks + 3 * downs + 1;
  const auto out = out_of(dict, layer(tail) + ".weight");
  if (!out) throw fail(str("no final convolution at model.model.", tail));
  DetectedArch d;
  d.arch = "lama";
  d.scale = 1;
  d.in_channels = int(*in);
  d.out_channels = int(*out);
  if (d.in_channels != d.out_channels + 1)
    throw fail(str("the first convolution takes ", *in, " channels and the last gives ", *out, "; LaMa takes the image and a mask"));
  for (const int64_t c : {*ngf, *local, *global})
    if (c < 1 || c > kMaxWidth) throw fail(str("a width of ", c, " channels (1 to ", kMaxWidth, ")"));
  if (*global % 2) throw fail(str("a global part of ", *global, " channels (the spectral transform halves it)"));
  d.params = {{"ngf", double(*ngf)}, {"downs", double(downs)}, {"blocks", double(blocks)}, {"local", double(*local)}, {"global", double(*global)}};
  // The downsampling widths between the first and the bottleneck (published: 128, 256).
  for (int i = 1; i < downs; ++i) {
    const auto w = out_of(dict, layer(1 + i) + ".ffc.convl2l.weight");
    if (!w || *w < 1 || *w > kMaxWidth) throw fail(str("model.model.", 1 + i, ".ffc.convl2l has no usable width"));
    d.params[str("w", i)] = double(*w);
  }
  if (raw.count("generator.model.1.bn_l.running_mean")) d.variant = "training checkpoint";
  return d;
}

}  // namespace

Architecture lama_architecture() {
  return {"lama", detect, [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<Lama>(generator_keys(dict), d, source);
          }};
}

}  // namespace framelift::models
