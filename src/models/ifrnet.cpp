// IFRNet's network, written from upstream's models/IFRNet{,_S,_L}.py (Model.inference) and
// utils.warp; state dict keys are upstream's module paths.
#include "models/ifrnet.h"

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "arch/declaration.h"
#include "infer/tiler.h"
#include "models/backward_warp.h"
#include "models/interpolator_networks.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr int kLevels = 4;
constexpr int kMultiple = 16;  // four stride-2 levels
constexpr int64_t kMaxWidth = 4096;  // L's widest decoder is 432

// conv + PReLU, upstream's convrelu(): "<p>.0" the convolution, "<p>.1" the slopes.
struct ConvRelu {
  Conv2d conv;
  at::Tensor slope;

  ConvRelu() = default;
  ConvRelu(WeightReader& r, const std::string& p, int64_t in, int64_t out, int64_t k = 3, int64_t stride = 1)
      : conv(read_conv(r, p + ".0", in, out, k, stride)), slope(r.tensor(p + ".1.weight", {out})) {}
  at::Tensor operator()(const at::Tensor& x) const { return at::prelu(conv(x), slope); }
  void visit(const TensorVisitor& f) {
    models::visit(conv, f);
    f(slope);
  }
};

// Upstream's ResBlock: its second and fourth convolutions rework only the last `side` channels.
struct ResBlock {
  ConvRelu c1, c2, c3, c4;
  Conv2d c5;
  at::Tensor slope;
  int64_t side = 0;

  ResBlock(WeightReader& r, const std::string& p, int64_t c, int64_t s)
      : c1(r, p + ".conv1", c, c), c2(r, p + ".conv2", s, s), c3(r, p + ".conv3", c, c), c4(r, p + ".conv4", s, s),
        c5(read_conv(r, p + ".conv5", c, c, 3)), slope(r.tensor(p + ".prelu.weight", {c})), side(s) {}

  at::Tensor on_side(const at::Tensor& x, const ConvRelu& conv) const {
    const int64_t keep = x.size(1) - side;
    return at::cat({x.narrow(1, 0, keep), conv(x.narrow(1, keep, side))}, 1);
  }
  at::Tensor operator()(const at::Tensor& x) const {
    const at::Tensor y = on_side(c3(on_side(c1(x), c2)), c4);
    return at::prelu(x + c5(y), slope);
  }
  void visit(const TensorVisitor& f) {
    for (ConvRelu* c : {&c1, &c2, &c3, &c4}) c->visit(f);
    models::visit(c5, f);
    f(slope);
  }
};

// decoder{L}.convblock: convrelu, ResBlock, a stride-2 deconvolution to twice the size.
struct Decoder {
  ConvRelu head;
  ResBlock body;
  ConvTranspose2d up;

  Decoder(WeightReader& r, const std::string& p, int64_t in, int64_t width, int64_t side, int64_t out)
      : head(r, p + ".0", in, width), body(r, p + ".1", width, side), up(read_deconv(r, p + ".2", width, out, 4, 2, 1)) {}
  at::Tensor operator()(const at::Tensor& x) const { return up(body(head(x))); }
  void visit(const TensorVisitor& f) {
    head.visit(f);
    body.visit(f);
    models::visit(up, f);
  }
};

// Decoder L's input and output planes: L = 4 takes both frames' features and the timestep; the
// others the intermediate features from below, both warped features and both flows. Each hands up
// two flows and the next level's intermediate features; decoder 1 a mask and an RGB residual.
int64_t decoder_in(const IfrnetShape& s, int level) {
  const int64_t c = s.encoder[level - 1];
  return level == kLevels ? 2 * c + 1 : 3 * c + 4;
}
int64_t decoder_out(const IfrnetShape& s, int level) { return level == 1 ? 4 + 1 + 3 : 4 + s.encoder[level - 2]; }

std::string level_key(const char* part, int level, const char* rest) { return str(part, level, rest); }

std::string variant_of(const IfrnetShape& s) {
  using C = std::array<int64_t, 4>;
  if (s.encoder == C{24, 36, 54, 72} && s.first_kernel == 3) return "S";
  if (s.encoder == C{32, 48, 72, 96} && s.first_kernel == 3) return "base";
  if (s.encoder == C{64, 96, 144, 192} && s.first_kernel == 7) return "L";
  return "custom widths";
}

class Ifrnet : public FrameInterpolator {
 public:
  Ifrnet(const weights::StateDict& dict, const std::string& source, const IfrnetShape& s) {
    WeightReader r(dict, source);
    int64_t in = 3;
    for (int l = 1; l <= kLevels; ++l) {
      const std::string p = level_key("encoder.pyramid", l, "");
      const int64_t c = s.encoder[l - 1], k = l == 1 ? s.first_kernel : 3;
      pyramid_.push_back({ConvRelu(r, p + ".0", in, c, k, 2), ConvRelu(r, p + ".1", c, c)});
      in = c;
    }
    for (int l = 1; l <= kLevels; ++l)
      decoders_.emplace_back(r, level_key("decoder", l, ".convblock"), decoder_in(s, l), s.decoder[l - 1], s.side[l - 1],
                             decoder_out(s, l));
    r.expect_all_used();
    info_ = {"ifrnet", s.variant, kMultiple};
  }

  const InterpolatorInfo& info() const override { return info_; }

  at::Tensor interpolate(const at::Tensor& a, const at::Tensor& b, double t, double scale) override {
    // Upstream's scale_factor shrinks the frames before the network; the pyramid then still needs
    // multiples of 16, so the frame is padded to 16 / scale.
    const double multiple = kMultiple / scale;
    if (!(scale > 0 && scale <= 1) || std::abs(multiple - std::round(multiple)) > 1e-9)
      throw Error(ErrorKind::Usage, str("IFRNet scale must be in (0, 1] and divide 16 (1, 0.5, 0.8, 0.25...), got ", scale));
    at::NoGradGuard no_grad;
    const int64_t h = a.size(2), w = a.size(3);
    at::Tensor img0 = infer::pad_to_multiple(a.to(device_), int(std::round(multiple)));
    at::Tensor img1 = infer::pad_to_multiple(b.to(device_), int(std::round(multiple)));
    // The mean of both frames, over everything (upstream: cat on H, then C, H, W), in fp32.
    const at::Tensor mean = at::cat({img0, img1}, 2).to(at::kFloat).mean(1, true).mean(2, true).mean(3, true);
    img0 = (img0 - mean).to(dtype_);
    img1 = (img1 - mean).to(dtype_);
    at::Tensor out = predict(img0, img1, t, scale) + mean.to(dtype_);
    return out.clamp(0, 1).narrow(2, 0, h).narrow(3, 0, w).to(a.scalar_type());
  }

  void to(c10::Device device, c10::ScalarType dtype) override {
    const TensorVisitor convert = [&](at::Tensor& x) { x = x.to(device, dtype); };
    for (auto& level : pyramid_)
      for (ConvRelu& c : level) c.visit(convert);
    for (Decoder& d : decoders_) d.visit(convert);
    device_ = device;
    dtype_ = dtype;
  }

 private:
  std::vector<at::Tensor> encode(at::Tensor x) const {
    std::vector<at::Tensor> features;
    for (const auto& level : pyramid_) {
      x = level[1](level[0](x));
      features.push_back(x);
    }
    return features;
  }

  // The mean-free intermediate frame (before the mean goes back and the clamp).
  at::Tensor predict(const at::Tensor& img0, const at::Tensor& img1, double t, double scale) const {
    const std::vector<at::Tensor> f0 = encode(resize_bilinear(img0, scale)), f1 = encode(resize_bilinear(img1, scale));
    const at::Tensor& top0 = f0[kLevels - 1];
    const at::Tensor embt = at::full({top0.size(0), 1, top0.size(2), top0.size(3)}, t, top0.options());
    at::Tensor out = decoders_[kLevels - 1](at::cat({top0, f1[kLevels - 1], embt}, 1));
    at::Tensor flow0 = out.narrow(1, 0, 2), flow1 = out.narrow(1, 2, 2);
    for (int l = kLevels - 1; l >= 1; --l) {
      const at::Tensor& g0 = f0[l - 1];
      const at::Tensor in = at::cat({out.narrow(1, 4, out.size(1) - 4), backward_warp(g0, flow0),
                                     backward_warp(f1[l - 1], flow1), flow0, flow1}, 1);
      out = decoders_[l - 1](in);
      flow0 = out.narrow(1, 0, 2) + 2.0 * resize_bilinear(flow0, 2.0);
      flow1 = out.narrow(1, 2, 2) + 2.0 * resize_bilinear(flow1, 2.0);
    }
    const at::Tensor mask = resize_bilinear(at::sigmoid(out.narrow(1, 4, 1)), 1.0 / scale);
    const at::Tensor residual = resize_bilinear(out.narrow(1, 5, 3), 1.0 / scale);
    flow0 = resize_bilinear(flow0, 1.0 / scale) * (1.0 / scale);
    flow1 = resize_bilinear(flow1, 1.0 / scale) * (1.0 / scale);
    return mask * backward_warp(img0, flow0) + (1 - mask) * backward_warp(img1, flow1) + residual;
  }

  std::vector<std::array<ConvRelu, 2>> pyramid_;
  std::vector<Decoder> decoders_;  // decoder1 .. decoder4
  InterpolatorInfo info_;
  c10::Device device_ = c10::kCPU;
  c10::ScalarType dtype_ = at::kFloat;
};

// Sizes read off one convolution: [out, in, k, k], or a refusal naming it.
std::array<int64_t, 3> conv_shape(const weights::StateDict& dict, const std::string& key, const std::string& source) {
  auto it = dict.find(key);
  if (it == dict.end() || it->second.dim() != 4 || it->second.size(2) != it->second.size(3))
    throw Error(ErrorKind::Model, str(source, ": IFRNet layout: ", key, " is missing or not a square convolution"));
  return {it->second.size(0), it->second.size(1), it->second.size(2)};
}

}  // namespace

std::optional<IfrnetShape> detect_ifrnet(const weights::StateDict& dict, const std::string& source) {
  if (!has_keys(dict, {"encoder.pyramid1.0.0.weight", "decoder4.convblock.0.0.weight", "decoder1.convblock.2.weight"}))
    return std::nullopt;
  IfrnetShape s;
  for (int l = 1; l <= kLevels; ++l) {
    const auto enc = conv_shape(dict, level_key("encoder.pyramid", l, ".0.0.weight"), source);
    s.encoder[l - 1] = enc[0];
    if (l == 1) s.first_kernel = enc[2];
    s.decoder[l - 1] = conv_shape(dict, level_key("decoder", l, ".convblock.0.0.weight"), source)[0];
    s.side[l - 1] = conv_shape(dict, level_key("decoder", l, ".convblock.1.conv2.0.weight"), source)[0];
  }
  // A weight file is untrusted: widths out of any plausible range are refused before a
  // convolution sees them (0 channels) or a reader allocates them (2^40).
  if (s.first_kernel % 2 == 0 || s.first_kernel > 15)
    throw Error(ErrorKind::Model, str(source, ": IFRNet layout: first kernel ", s.first_kernel, " (odd, at most 15)"));
  for (int l = 1; l <= kLevels; ++l) {
    for (const int64_t c : {s.encoder[l - 1], s.decoder[l - 1]})
      if (c < 1 || c > kMaxWidth)
        throw Error(ErrorKind::Model, str(source, ": IFRNet layout: level ", l, " is ", c, " channels wide (1 to ", kMaxWidth, ")"));
    if (s.side[l - 1] <= 0 || s.side[l - 1] > s.decoder[l - 1])
      throw Error(ErrorKind::Model, str(source, ": IFRNet layout: decoder", l, " has ", s.side[l - 1],
                                        " side channels of ", s.decoder[l - 1]));
  }
  s.variant = variant_of(s);
  return s;
}

arch::ArchParams ifrnet_arch_params(const IfrnetShape& s) {
  arch::ArchParams p{{"k1", double(s.first_kernel)}};
  for (int l = 1; l <= kLevels; ++l) {
    p[str("c", l)] = double(s.encoder[l - 1]);
    p[str("d", l)] = double(s.decoder[l - 1]);
    p[str("s", l)] = double(s.side[l - 1]);
  }
  return p;
}

std::unique_ptr<FrameInterpolator> build_ifrnet(const weights::StateDict& dict, const std::string& source) {
  const std::optional<IfrnetShape> shape = detect_ifrnet(dict, source);
  if (!shape) throw Error(ErrorKind::Model, str(source, ": not an IFRNet (encoder.pyramid1, decoder1..4.convblock expected)"));
  return std::make_unique<Ifrnet>(dict, source, *shape);
}

std::string describe_ifrnet(const IfrnetShape& shape, const weights::StateDict& dict) {
  return describe_interpolator("ifrnet", shape.variant, kMultiple, dict, ifrnet_arch_params(shape));
}

InterpolatorNetwork ifrnet_interpolator() {
  return {"ifrnet",
          [](const weights::StateDict& dict, const std::string& source) -> std::optional<arch::ArchParams> {
            if (auto shape = detect_ifrnet(dict, source)) return ifrnet_arch_params(*shape);
            return std::nullopt;
          },
          [](const weights::StateDict& dict, const std::string& source) { return build_ifrnet(dict, source); },
          [](const weights::StateDict& dict, const std::string& source) { return describe_ifrnet(*detect_ifrnet(dict, source), dict); }};
}

}  // namespace framelift::models
