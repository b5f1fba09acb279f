// Real-CUGAN (bilibili): two cascaded U-Nets with squeeze-excitation, 2x/3x/4x, "se" and "pro"
// weights. UNet1 upscales (a transposed convolution at the bottom), UNet2 refines its output, and
// the sum of both, cropped, is the result; 4x adds a conv + pixel shuffle and the nearest-upscaled
// input. The convolutions are unpadded, so the input is reflect-padded (18/14/19 px for 2x/3x/4x)
// and rounded up to the size multiple (2, 4, 2) inside forward(); callers see out = scale * in.
// "pro" models carry a dummy tensor "pro" and expect inputs mapped to 0.15..0.85.
// waifu2x's noise-only CUNet (models-cunet/noiseN_model, 1x) is the same pair of U-Nets with a 3x3
// convolution where UNet1 has its transposed one; it is registered as "waifu2x_cunet" (the 2x
// CUNet is Real-CUGAN 2x and detected as such). It pads 28 px inside forward() too, but leaves the
// multiple of 4 to the caller (its declared size multiple), as its ncnn graph does.
// Upstream: bilibili/ailab Real-CUGAN upcunet_v3.py, nagadomi/nunif waifu2x/models/cunet.py.
#include <ATen/ATen.h>

#include "infer/fp32_islands.h"
#include "arch/declaration.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr double kSlope = 0.1;

at::Tensor lrelu(at::Tensor x) { return at::leaky_relu_(x, kSlope); }

// Drops n pixels on each side (upstream's F.pad with negative padding).
at::Tensor crop(const at::Tensor& x, int64_t n) {
  return x.slice(2, n, x.size(2) - n).slice(3, n, x.size(3) - n);
}

struct SeBlock {
  Conv2d conv1, conv2;
  bool present = false;

  at::Tensor operator()(const at::Tensor& x) const {
    if (!present) return x;
    // The mean in float32 even for half weights, as upstream does: fp16 sums overflow.
    at::Tensor m = x.to(at::kFloat).mean({2, 3}, true).to(x.scalar_type());
    return x * at::sigmoid(conv2(at::relu(conv1(m))));
  }
};

struct UNetConv {
  Conv2d conv0, conv2;
  SeBlock se;

  UNetConv() = default;
  UNetConv(WeightReader& r, const std::string& p, int64_t in, int64_t mid, int64_t out, bool with_se)
      : conv0(read_conv(r, p + ".conv.0", in, mid, 3, 1, 0)), conv2(read_conv(r, p + ".conv.2", mid, out, 3, 1, 0)) {
    if (with_se) {
      se.conv1 = read_conv(r, p + ".seblock.conv1", out, out / 8, 1, 1, 0);
      se.conv2 = read_conv(r, p + ".seblock.conv2", out / 8, out, 1, 1, 0);
      se.present = true;
    }
  }
  at::Tensor operator()(const at::Tensor& x) const { return se(lrelu(conv2(lrelu(conv0(x))))); }
  void visit_weights(const TensorVisitor& f) {
    for (Conv2d* c : {&conv0, &conv2, &se.conv1, &se.conv2}) visit(*c, f);
  }
};

struct UNet1 {
  UNetConv conv1, conv2;
  Conv2d conv1_down, conv3;
  ConvTranspose2d conv2_up, conv_bottom;
  Conv2d conv_bottom_1x;  // waifu2x noise-only: in place of conv_bottom
  bool upscales = true;

  UNet1() = default;
  // The bottom deconvolution: kernel 4 stride 2 for 2x/4x, kernel 5 stride 3 for 3x; 1x has an
  // unpadded 3x3 convolution there.
  UNet1(WeightReader& r, int64_t in, int64_t out, int64_t up)
      : conv1(r, "unet1.conv1", in, 32, 64, false),
        conv2(r, "unet1.conv2", 64, 128, 64, true),
        conv1_down(read_conv(r, "unet1.conv1_down", 64, 64, 2, 2, 0)),
        conv3(read_conv(r, "unet1.conv3", 64, 64, 3, 1, 0)),
        conv2_up(read_deconv(r, "unet1.conv2_up", 64, 64, 2, 2, 0)),
        upscales(up != 1) {
    if (up == 1) conv_bottom_1x = read_conv(r, "unet1.conv_bottom", 64, out, 3, 1, 0);
    else if (up == 3) conv_bottom = read_deconv(r, "unet1.conv_bottom", 64, out, 5, 3, 2);
    else conv_bottom = read_deconv(r, "unet1.conv_bottom", 64, out, 4, 2, 3);
  }

  at::Tensor operator()(const at::Tensor& x) const {
    at::Tensor x1 = conv1(x);
    at::Tensor x2 = lrelu(conv2_up(conv2(lrelu(conv1_down(x1)))));
    at::Tensor y = lrelu(conv3(crop(x1, 4) + x2));
    return upscales ? conv_bottom(y) : conv_bottom_1x(y);
  }
  void visit_weights(const TensorVisitor& f) {
    conv1.visit_weights(f);
    conv2.visit_weights(f);
    for (Conv2d* c : {&conv1_down, &conv3, &conv_bottom_1x}) visit(*c, f);
    for (ConvTranspose2d* c : {&conv2_up, &conv_bottom}) visit(*c, f);
  }
};

struct UNet2 {
  UNetConv conv1, conv2, conv3, conv4;
  Conv2d conv1_down, conv2_down, conv5, conv_bottom;
  ConvTranspose2d conv3_up, conv4_up;

  UNet2() = default;
  UNet2(WeightReader& r, int64_t in, int64_t out)
      : conv1(r, "unet2.conv1", in, 32, 64, false),
        conv2(r, "unet2.conv2", 64, 64, 128, true),
        conv3(r, "unet2.conv3", 128, 256, 128, true),
        conv4(r, "unet2.conv4", 128, 64, 64, true),
        conv1_down(read_conv(r, "unet2.conv1_down", 64, 64, 2, 2, 0)),
        conv2_down(read_conv(r, "unet2.conv2_down", 128, 128, 2, 2, 0)),
        conv5(read_conv(r, "unet2.conv5", 64, 64, 3, 1, 0)),
        conv_bottom(read_conv(r, "unet2.conv_bottom", 64, out, 3, 1, 0)),
        conv3_up(read_deconv(r, "unet2.conv3_up", 128, 128, 2, 2, 0)),
        conv4_up(read_deconv(r, "unet2.conv4_up", 64, 64, 2, 2, 0)) {}

  at::Tensor operator()(const at::Tensor& x) const {
    at::Tensor x1 = conv1(x);
    at::Tensor x2 = conv2(lrelu(conv1_down(x1)));
    at::Tensor x3 = lrelu(conv3_up(conv3(lrelu(conv2_down(x2)))));
    at::Tensor x4 = lrelu(conv4_up(conv4(crop(x2, 4) + x3)));
    return conv_bottom(lrelu(conv5(crop(x1, 16) + x4)));
  }
  void visit_weights(const TensorVisitor& f) {
    for (UNetConv* c : {&conv1, &conv2, &conv3, &conv4}) c->visit_weights(f);
    for (Conv2d* c : {&conv1_down, &conv2_down, &conv5, &conv_bottom}) visit(*c, f);
    for (ConvTranspose2d* c : {&conv3_up, &conv4_up}) visit(*c, f);
  }
};

struct Geometry {
  int64_t pad, multiple;
};

// 1x: UNet1 crops 8 px a side and UNet2 20 at the input size, and UNet2's two poolings need a
// multiple of 4 (waifu2x-ncnn-vulkan's prepadding 28 for these models).
Geometry geometry(int scale) {
  if (scale == 1) return {28, 4};
  return scale == 3 ? Geometry{14, 4} : scale == 4 ? Geometry{19, 2} : Geometry{18, 2};
}

class RealCugan : public NativeModel {
 public:
  RealCugan(const weights::StateDict& dict, const DetectedArch& d, const std::string& source, bool pro)
      : NativeModel(declared_info(d), source), pro_(pro) {
    WeightReader r(dict, source);
    // 4x runs both U-Nets on 64 features and maps them to pixels with conv_final.
    const int64_t mid = d.scale == 4 ? 64 : d.out_channels;
    unet1_ = UNet1(r, d.in_channels, mid, d.scale);
    unet2_ = UNet2(r, mid, mid);
    if (d.scale == 4) conv_final_ = read_conv(r, "conv_final", 64, 12, 3, 1, 0);
    if (pro_) r.tensor("pro", {-1});
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    const int scale = info_.scale;
    const Geometry g = geometry(scale);
    const int64_t h0 = input.size(2), w0 = input.size(3);
    const int64_t ph = (h0 + g.multiple - 1) / g.multiple * g.multiple;
    const int64_t pw = (w0 + g.multiple - 1) / g.multiple * g.multiple;
    if (g.pad + ph - h0 >= h0 || g.pad + pw - w0 >= w0) {
      throw Error(ErrorKind::Model, str(source_, ": input ", w0, "x", h0, " is too small for ",
                                        scale == 1 ? "CUNet's " : "Real-CUGAN's ", g.pad,
                                        "-pixel reflect padding (use at least ", g.pad + g.multiple, "x", g.pad + g.multiple, ")"));
    }
    at::Tensor x = pro_ ? input * 0.7 + 0.15 : input;
    at::Tensor base = x;
    x = infer::reflect_pad2d(x, {g.pad, g.pad + pw - w0, g.pad, g.pad + ph - h0});
    x = unet1_(x);
    x = unet2_(x) + crop(x, 20);
    if (scale == 4) x = at::pixel_shuffle(crop(conv_final_(x), 1), 2);
    x = x.slice(2, 0, h0 * scale).slice(3, 0, w0 * scale);
    if (scale == 4) x = x + upsample_nearest(base, 4);
    return pro_ ? (x - 0.15) / 0.7 : x;
  }

  void visit_weights(const TensorVisitor& f) override {
    unet1_.visit_weights(f);
    unet2_.visit_weights(f);
    visit(conv_final_, f);
  }

 private:
  bool pro_;
  UNet1 unet1_;
  UNet2 unet2_;
  Conv2d conv_final_;
};

// Either architecture of the two U-Nets; the registered detectors keep their own.
std::optional<DetectedArch> detect_unets(const weights::StateDict& dict, const std::string& source) {
  if (!dict.count("unet1.conv1.conv.0.weight") || !dict.count("unet2.conv_bottom.weight")) return std::nullopt;
  auto in = dim_of(dict, "unet1.conv1.conv.0.weight", 4, 1);
  auto bottom_k = dim_of(dict, "unet1.conv_bottom.weight", 4, 2);
  auto out = dim_of(dict, "unet2.conv_bottom.weight", 4, 0);
  if (!in || !bottom_k || !out)
    throw Error(ErrorKind::Model, str(source, ": Real-CUGAN layout: unet1.conv1, unet1.conv_bottom or unet2.conv_bottom is not a convolution"));
  DetectedArch d;
  d.arch = "realcugan";
  d.in_channels = static_cast<int>(*in);
  if (dict.count("conv_final.weight")) {
    if (*in == 12)
      throw Error(ErrorKind::Model, str(source, ": Real-CUGAN 2x \"fast\" (pixel-unshuffle) models are not supported"));
    d.scale = 4;
    d.out_channels = 3;
  } else if (*bottom_k == 3) {
    d.arch = "waifu2x_cunet";
    d.scale = 1;
    d.out_channels = static_cast<int>(*out);
  } else if (*bottom_k == 5) {
    d.scale = 3;
    d.out_channels = static_cast<int>(*out);
  } else {
    d.scale = 2;
    d.out_channels = static_cast<int>(*out);
  }
  // The raw values, not the int they narrowed to: 2^32 + 3 channels would otherwise pass as 3.
  arch::check_shapes(d.arch, {{"in_channels", double(*in)}, {"out_channels", double(*out)}}, source);
  if (d.arch == "realcugan") d.variant = dict.count("pro") ? "pro" : "se";
  return d;
}

std::function<std::optional<DetectedArch>(const weights::StateDict&, const std::string&)> detect(const std::string& arch) {
  return [arch](const weights::StateDict& dict, const std::string& source) -> std::optional<DetectedArch> {
    auto d = detect_unets(dict, source);
    if (!d || d->arch != arch) return std::nullopt;
    return d;
  };
}

std::unique_ptr<ImageModel> build(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) {
  return std::make_unique<RealCugan>(dict, d, source, dict.count("pro") != 0);
}

}  // namespace

Architecture realcugan_architecture() { return {"realcugan", detect("realcugan"), build}; }

Architecture waifu2x_cunet_architecture() { return {"waifu2x_cunet", detect("waifu2x_cunet"), build}; }

}  // namespace framelift::models
