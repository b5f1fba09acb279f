#include "models/rife_native.h"

#include <ATen/ATen.h>

#include <array>

#include "infer/tiler.h"
#include "models/backward_warp.h"
#include "models/native_model.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/load_weights.h"
#include "weights/ncnn_bin.h"
#include "weights/ncnn_param.h"

namespace framelift::models {
namespace {

constexpr int kBlocks = 4;
constexpr int kResConvs = 8;
constexpr double kSlope = 0.2;

// Bilinear resize by a factor, as F.interpolate(scale_factor=f, mode="bilinear") does it.
at::Tensor resize(const at::Tensor& x, double factor) {
  if (factor == 1.0) return x;
  const int64_t h = static_cast<int64_t>(x.size(2) * factor), w = static_cast<int64_t>(x.size(3) * factor);
  return at::upsample_bilinear2d(x, {h, w}, false, factor, factor);
}

struct IFBlock {
  Conv2d conv0a, conv0b;
  std::array<Conv2d, kResConvs> res;
  std::array<at::Tensor, kResConvs> beta;  // [1, c, 1, 1]
  ConvTranspose2d last;

  IFBlock(WeightReader& r, const std::string& p, int64_t in, int64_t c) {
    conv0a = read_conv(r, p + ".conv0.0.0", in, c / 2, 3, 2, 1);
    conv0b = read_conv(r, p + ".conv0.1.0", c / 2, c, 3, 2, 1);
    for (int j = 0; j < kResConvs; ++j) {
      res[j] = read_conv(r, str(p, ".convblock.", j, ".conv"), c, c, 3);
      const std::string b = str(p, ".convblock.", j, ".beta");
      beta[j] = r.has(b) ? r.tensor(b, {1, c, 1, 1}) : at::Tensor();  // folded into the conv in ncnn exports
    }
    last = read_deconv(r, p + ".lastconv.0", c, 24, 4, 2, 1);
  }

  // Returns flow [N, 4, H, W] and mask [N, 1, H, W] at the input's size.
  std::pair<at::Tensor, at::Tensor> operator()(at::Tensor x, const at::Tensor& flow, double scale) const {
    x = resize(x, 1.0 / scale);
    if (flow.defined()) x = at::cat({x, resize(flow, 1.0 / scale) * (1.0 / scale)}, 1);
    at::Tensor feat = at::leaky_relu(conv0b(at::leaky_relu(conv0a(x), kSlope)), kSlope);
    for (int j = 0; j < kResConvs; ++j) {
      at::Tensor y = res[j](feat);
      if (beta[j].defined()) y = y * beta[j];
      feat = at::leaky_relu(y + feat, kSlope);
    }
    at::Tensor tmp = resize(at::pixel_shuffle(last(feat), 2), scale);
    return {tmp.narrow(1, 0, 4) * scale, tmp.narrow(1, 4, 1)};
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

class RifeNative : public FrameInterpolator {
 public:
  RifeNative(const weights::StateDict& dict, const std::string& source) {
    for (const auto& [key, tensor] : dict) {
      if (key.rfind("encode.", 0) == 0)
        throw Error(ErrorKind::Model, str(source, ": RIFE 4.7 or later (it has a feature encoder, ", key,
                                          "); framelift runs RIFE 4.6 natively"));
    }
    auto in0 = dict.find("block0.conv0.0.0.weight");
    if (in0 == dict.end() || in0->second.dim() != 4 || in0->second.size(1) != 7)
      throw Error(ErrorKind::Model, str(source, ": not a RIFE 4.6 IFNet (block0.conv0.0.0.weight with 7 input "
                                                "channels expected)"));
    WeightReader r(dict, source);
    const std::array<int64_t, kBlocks> widths{192, 128, 96, 64};
    for (int i = 0; i < kBlocks; ++i) blocks_.emplace_back(r, str("block", i), i == 0 ? 7 : 12, widths[i]);
    r.expect_all_used();
    info_.arch = "rife";
    info_.version = "4.6";
    info_.size_multiple = 32;
  }

  const InterpolatorInfo& info() const override { return info_; }

  at::Tensor interpolate(const at::Tensor& a, const at::Tensor& b, double t, double scale) override {
    if (!(scale > 0 && scale <= 4)) throw Error(ErrorKind::Usage, str("RIFE scale must be in (0, 4], got ", scale));
    at::NoGradGuard no_grad;
    const int64_t h = a.size(2), w = a.size(3);
    // Practical-RIFE pads to 32 / scale so the coarsest level still divides evenly.
    const int multiple = std::max(32, static_cast<int>(32 / scale));
    at::Tensor img0 = infer::pad_to_multiple(a.to(device_, dtype_), multiple);
    at::Tensor img1 = infer::pad_to_multiple(b.to(device_, dtype_), multiple);
    at::Tensor timestep = at::full({a.size(0), 1, img0.size(2), img0.size(3)}, t, img0.options());
    const std::array<double, kBlocks> scales{8 / scale, 4 / scale, 2 / scale, 1 / scale};
    at::Tensor flow, mask, warped0 = img0, warped1 = img1;
    for (int i = 0; i < kBlocks; ++i) {
      if (!flow.defined()) {
        std::tie(flow, mask) = blocks_[i](at::cat({img0, img1, timestep}, 1), at::Tensor(), scales[i]);
      } else {
        auto [df, dm] = blocks_[i](at::cat({warped0, warped1, timestep, mask}, 1), flow, scales[i]);
        flow = flow + df;
        mask = mask + dm;
      }
      warped0 = backward_warp(img0, flow.narrow(1, 0, 2));
      warped1 = backward_warp(img1, flow.narrow(1, 2, 2));
    }
    at::Tensor m = at::sigmoid(mask);
    at::Tensor out = warped0 * m + warped1 * (1 - m);
    return out.narrow(2, 0, h).narrow(3, 0, w).to(a.scalar_type());
  }

  void to(c10::Device device, c10::ScalarType dtype) override {
    for (auto& block : blocks_) block.visit([&](at::Tensor& t) { t = t.to(device, dtype); });
    device_ = device;
    dtype_ = dtype;
  }

 private:
  std::vector<IFBlock> blocks_;
  InterpolatorInfo info_;
  c10::Device device_ = c10::kCPU;
  c10::ScalarType dtype_ = at::kFloat;
};

}  // namespace

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
