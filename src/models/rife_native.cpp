#include "models/rife_native.h"

#include <ATen/ATen.h>

#include <array>
#include <optional>

#include "infer/fp32_islands.h"
#include "infer/tiler.h"
#include "models/backward_warp.h"
#include "models/native_model.h"
#include "arch/rife_versions.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/load_weights.h"
#include "weights/ncnn_bin.h"
#include "weights/ncnn_param.h"

namespace framelift::models {
namespace {

constexpr int kBlocks = 4;  // 4.6
constexpr int kResConvs = 8;
constexpr double kSlope = 0.2;

at::Tensor resize(const at::Tensor& x, double factor) { return resize_bilinear(x, factor); }

// One level of the flow pyramid: two stride-2 convs, eight residual convs with a learned per-channel
// scale (beta), a stride-2 deconvolution and a pixel shuffle, run at 1/scale of the frame. Its
// output planes are the flow update (4), the mask (1) and, from 4.7 on, features (8) for the next
// level.
struct IFBlock {
  Conv2d conv0a, conv0b;
  std::array<Conv2d, kResConvs> res;
  std::array<at::Tensor, kResConvs> beta;  // [1, c, 1, 1]
  ConvTranspose2d last;

  IFBlock(WeightReader& r, const std::string& p, int64_t in, int64_t c, int64_t out_planes) {
    conv0a = read_conv(r, p + ".conv0.0.0", in, c / 2, 3, 2, 1);
    conv0b = read_conv(r, p + ".conv0.1.0", c / 2, c, 3, 2, 1);
    for (int j = 0; j < kResConvs; ++j) {
      res[j] = read_conv(r, str(p, ".convblock.", j, ".conv"), c, c, 3);
      const std::string b = str(p, ".convblock.", j, ".beta");
      beta[j] = r.has(b) ? r.tensor(b, {1, c, 1, 1}) : at::Tensor();  // folded into the conv in ncnn exports
    }
    last = read_deconv(r, p + ".lastconv.0", c, 4 * out_planes, 4, 2, 1);
  }

  struct Out {
    at::Tensor flow, mask, feat;  // [N, 4 | 1 | rest, H, W] at the input's size; feat undefined for 4.6
  };
  Out operator()(at::Tensor x, const at::Tensor& flow, double scale) const {
    x = resize(x, 1.0 / scale);
    if (flow.defined()) x = at::cat({x, resize(flow, 1.0 / scale) * (1.0 / scale)}, 1);
    at::Tensor feat = at::leaky_relu(conv0b(at::leaky_relu(conv0a(x), kSlope)), kSlope);
    for (int j = 0; j < kResConvs; ++j) {
      at::Tensor y = res[j](feat);
      if (beta[j].defined()) y = y * beta[j];
      feat = at::leaky_relu(y + feat, kSlope);
    }
    at::Tensor tmp = resize(at::pixel_shuffle(last(feat), 2), scale);
    const int64_t planes = tmp.size(1);
    return {tmp.narrow(1, 0, 4) * scale, tmp.narrow(1, 4, 1), planes > 6 ? tmp.narrow(1, 5, planes - 5) : at::Tensor()};
  }

  void visit(const TensorVisitor& f) {
    models::visit(conv0a, f);
    models::visit(conv0b, f);
    for (auto& c : res) models::visit(c, f);
    for (auto& b : beta)
      if (b.defined()) f(b);
    models::visit(last, f);
  }
};

// The feature encoder of 4.7 and later ("Head"): a stride-2 conv, two convs, a stride-2
// deconvolution back to full size; LeakyReLU(0.2) between, none after.
struct Encoder {
  Conv2d c0, c1, c2;
  ConvTranspose2d c3;

  Encoder(WeightReader& r, int64_t hidden, int64_t features)
      : c0(read_conv(r, "encode.cnn0", 3, hidden, 3, 2, 1)),
        c1(read_conv(r, "encode.cnn1", hidden, hidden, 3)),
        c2(read_conv(r, "encode.cnn2", hidden, hidden, 3)),
        c3(read_deconv(r, "encode.cnn3", hidden, features, 4, 2, 1)) {}

  at::Tensor operator()(const at::Tensor& x) const {
    return c3(at::leaky_relu(c2(at::leaky_relu(c1(at::leaky_relu(c0(x), kSlope)), kSlope)), kSlope));
  }
  void visit(const TensorVisitor& f) {
    for (Conv2d* c : {&c0, &c1, &c2}) models::visit(*c, f);
    models::visit(c3, f);
  }
};

// Block widths and input channels read off a 4.7+ state dict: block0..blockN-1.
std::vector<int> block_widths(const weights::StateDict& dict, const std::string& source) {
  std::vector<int> widths;
  for (int i = 0; dict.count(str("block", i, ".conv0.1.0.weight")); ++i) {
    const auto w = dim_of(dict, str("block", i, ".conv0.1.0.weight"), 4, 0);
    if (!w) throw Error(ErrorKind::Model, str(source, ": tensor block", i, ".conv0.1.0.weight is not a convolution"));
    widths.push_back(int(*w));
  }
  if (widths.size() < 2 || widths.size() > 6)
    throw Error(ErrorKind::Model, str(source, ": a RIFE encoder layout with ", widths.size(), " flow blocks (4 or 5 expected)"));
  return widths;
}

class RifeNative : public FrameInterpolator {
 public:
  RifeNative(const weights::StateDict& dict, const std::string& source) {
    WeightReader r(dict, source);
    if (dict.count("encode.cnn0.weight")) {
      read_encoder_layout(r, dict, source);
    } else {
      auto in0 = dict.find("block0.conv0.0.0.weight");
      if (in0 == dict.end() || in0->second.dim() != 4 || in0->second.size(1) != 7)
        throw Error(ErrorKind::Model, str(source, ": not a RIFE 4.6 IFNet (block0.conv0.0.0.weight with 7 input "
                                                  "channels expected) nor a 4.7+ one (encode.cnn0)"));
      const std::array<int64_t, 4> widths{192, 128, 96, 64};
      for (int i = 0; i < 4; ++i) blocks_.emplace_back(r, str("block", i), i == 0 ? 7 : 12, widths[i], 6);
      divisors_ = {8, 4, 2, 1};
      info_.version = "4.6";
    }
    r.expect_all_used();
    info_.arch = "rife";
  }

  const InterpolatorInfo& info() const override { return info_; }

  at::Tensor interpolate(const at::Tensor& a, const at::Tensor& b, double t, double scale) override {
    if (!(scale > 0 && scale <= 4)) throw Error(ErrorKind::Usage, str("RIFE scale must be in (0, 4], got ", scale));
    at::NoGradGuard no_grad;
    const int64_t h = a.size(2), w = a.size(3);
    // Practical-RIFE pads to modulo / scale so the coarsest level still divides evenly.
    const int multiple = std::max(info_.size_multiple, static_cast<int>(info_.size_multiple / scale));
    at::Tensor img0 = infer::pad_to_multiple(a.to(device_, dtype_), multiple);
    at::Tensor img1 = infer::pad_to_multiple(b.to(device_, dtype_), multiple);
    at::Tensor timestep = at::full({a.size(0), 1, img0.size(2), img0.size(3)}, t, img0.options());
    at::Tensor out = encoder_ ? with_features(img0, img1, timestep, scale) : v46(img0, img1, timestep, scale);
    return out.narrow(2, 0, h).narrow(3, 0, w).to(a.scalar_type());
  }

  void to(c10::Device device, c10::ScalarType dtype) override {
    const TensorVisitor convert = [&](at::Tensor& t) { t = t.to(device, dtype); };
    for (auto& block : blocks_) block.visit(convert);
    if (encoder_) encoder_->visit(convert);
    device_ = device;
    dtype_ = dtype;
  }

 private:
  void read_encoder_layout(WeightReader& r, const weights::StateDict& dict, const std::string& source) {
    const auto hidden = dim_of(dict, "encode.cnn0.weight", 4, 0), features = dim_of(dict, "encode.cnn3.weight", 4, 1);
    if (!hidden || !features) throw Error(ErrorKind::Model, str(source, ": RIFE encoder (encode.cnn0, encode.cnn3) is not convolutions"));
    const std::vector<int> widths = block_widths(dict, source);
    const arch::RifeVersion v = arch::rife_version_for(int(*features), widths);
    // The 13-plane blocks of 4.22 and later; 4.7-4.21 vary (6 planes, no block features) and are not run.
    const auto planes = dim_of(dict, "block0.lastconv.0.weight", 4, 1);
    if (!planes || *planes != 4 * 13)
      throw Error(ErrorKind::Model, str(source, ": RIFE 4.7-4.21 (blocks end in ", planes.value_or(0) / 4,
                                        " planes); framelift runs 4.6 and 4.22 to 4.26 natively"));
    encoder_.emplace(r, *hidden, *features);
    const int64_t f = *features;
    for (size_t i = 0; i < widths.size(); ++i)
      blocks_.emplace_back(r, str("block", i), i == 0 ? 7 + 2 * f : 8 + 4 + 2 * f + 8, widths[i], 13);
    divisors_ = v.divisors;
    info_.version = v.name;
    info_.size_multiple = v.modulo;
  }

  at::Tensor v46(const at::Tensor& img0, const at::Tensor& img1, const at::Tensor& timestep, double scale) const {
    at::Tensor flow, mask, warped0 = img0, warped1 = img1;
    for (size_t i = 0; i < blocks_.size(); ++i) {
      if (!flow.defined()) {
        IFBlock::Out o = blocks_[i](at::cat({img0, img1, timestep}, 1), at::Tensor(), divisors_[i] / scale);
        flow = o.flow;
        mask = o.mask;
      } else {
        IFBlock::Out o = blocks_[i](at::cat({warped0, warped1, timestep, mask}, 1), flow, divisors_[i] / scale);
        flow = flow + o.flow;
        mask = mask + o.mask;
      }
      warped0 = backward_warp(img0, flow.narrow(1, 0, 2));
      warped1 = backward_warp(img1, flow.narrow(1, 2, 2));
    }
    const at::Tensor m = at::sigmoid(mask);
    return warped0 * m + warped1 * (1 - m);
  }

  // 4.22 and later: features of both frames from the encoder, warped along with the frames; each
  // block passes features to the next, and its mask replaces the previous one.
  at::Tensor with_features(at::Tensor img0, at::Tensor img1, const at::Tensor& timestep, double scale) const {
    // As vs-rife: the encoder sees the padded frames, the blocks and warps them clamped to [0, 1].
    const at::Tensor f0 = (*encoder_)(img0), f1 = (*encoder_)(img1);
    img0 = img0.clamp(0, 1);
    img1 = img1.clamp(0, 1);
    at::Tensor flow, mask, feat, warped0 = img0, warped1 = img1;
    for (size_t i = 0; i < blocks_.size(); ++i) {
      IFBlock::Out o;
      if (!flow.defined()) {
        o = blocks_[i](at::cat({img0, img1, f0, f1, timestep}, 1), at::Tensor(), divisors_[i] / scale);
        flow = o.flow;
      } else {
        const at::Tensor wf0 = backward_warp(f0, flow.narrow(1, 0, 2)), wf1 = backward_warp(f1, flow.narrow(1, 2, 2));
        o = blocks_[i](at::cat({warped0, warped1, wf0, wf1, timestep, mask, feat}, 1), flow, divisors_[i] / scale);
        flow = flow + o.flow;
      }
      mask = o.mask;
      feat = o.feat;
      warped0 = backward_warp(img0, flow.narrow(1, 0, 2));
      warped1 = backward_warp(img1, flow.narrow(1, 2, 2));
    }
    const at::Tensor m = at::sigmoid(mask);
    return warped0 * m + warped1 * (1 - m);
  }

  std::optional<Encoder> encoder_;
  std::vector<IFBlock> blocks_;
  std::vector<double> divisors_;
  InterpolatorInfo info_;
  c10::Device device_ = c10::kCPU;
  c10::ScalarType dtype_ = at::kFloat;
};

}  // namespace

arch::ArchParams rife_arch_params(const weights::StateDict& dict, const std::string& source) {
  if (!dict.count("encode.cnn0.weight")) return {{"features", 0}};
  const auto hidden = dim_of(dict, "encode.cnn0.weight", 4, 0), features = dim_of(dict, "encode.cnn3.weight", 4, 1);
  if (!hidden || !features) throw Error(ErrorKind::Model, str(source, ": RIFE encoder (encode.cnn0, encode.cnn3) is not convolutions"));
  const std::vector<int> widths = block_widths(dict, source);
  arch::ArchParams p{{"features", double(*features)}, {"hidden", double(*hidden)}, {"blocks", double(widths.size())}};
  for (size_t i = 0; i < widths.size(); ++i) p[str("width", i)] = widths[i];
  return p;
}

std::unique_ptr<FrameInterpolator> build_rife_native(const weights::StateDict& dict, const std::string& source) {
  return std::make_unique<RifeNative>(dict, source);
}

std::unique_ptr<FrameInterpolator> load_rife_native(const std::filesystem::path& file) {
  return build_rife_native(weights::load_weights(file), file.string());
}

weights::StateDict rife_ncnn_to_native_state_dict(const std::filesystem::path& param, const std::filesystem::path& bin) {
  const weights::NcnnGraph graph = weights::parse_ncnn_param(param);
  weights::NcnnBinOptions options;
  options.weightless_custom_types = {"rife.Warp"};
  const weights::StateDict ncnn = weights::ncnn_to_state_dict(graph, bin, options);
  // The export keeps PyTorch's layer order: per block 2 + 8 convolutions, then the deconvolution.
  weights::StateDict out;
  int conv = 0, deconv = 0;
  for (const auto& layer : graph.layers) {
    std::string target;
    if (layer.type == "Convolution") {
      const int block = conv / (2 + kResConvs), k = conv % (2 + kResConvs);
      target = k < 2 ? str("block", block, ".conv0.", k, ".0") : str("block", block, ".convblock.", k - 2, ".conv");
      ++conv;
    } else if (layer.type == "Deconvolution") {
      target = str("block", deconv++, ".lastconv.0");
    } else {
      continue;
    }
    for (const char* role : {".weight", ".bias"}) {
      auto it = ncnn.find(layer.name + role);
      if (it == ncnn.end()) continue;
      out[target + role] = it->second;  // the reader already gives deconvolutions PyTorch's layout
    }
  }
  if (conv != kBlocks * (2 + kResConvs) || deconv != kBlocks)
    throw Error(ErrorKind::Model, str(param.string(), ": not the RIFE 4.6 graph (", conv, " convolutions, ", deconv,
                                      " deconvolutions; expected 40 and 4)"));
  return out;
}

}  // namespace framelift::models
