#include "models/rife_ncnn.h"

#include <ATen/ATen.h>

#include <mutex>

#include "infer/tiler.h"
#include "models/backward_warp.h"
#include "models/ncnn/layer_registry.h"
#include "models/ncnn/ncnn_model.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

class WarpOp : public ncnn::NcnnOp {
 public:
  explicit WarpOp(const ncnn::LayerSpec& spec) {
    if (spec.layer.inputs.size() != 2) spec.fail("rife.Warp takes an image and a flow");
  }
  ncnn::Blobs forward(ncnn::Blobs in) override { return {backward_warp(in.at(0), in.at(1))}; }
};

class RifeNcnn : public FrameInterpolator {
 public:
  explicit RifeNcnn(std::unique_ptr<ncnn::NcnnModel> net) : net_(std::move(net)) {
    info_.arch = "rife-ncnn";
    info_.version = "4.x";
    info_.size_multiple = 32;
  }

  const InterpolatorInfo& info() const override { return info_; }

  at::Tensor interpolate(const at::Tensor& a, const at::Tensor& b, double t, double scale) override {
    if (scale != 1.0)
      throw Error(ErrorKind::Usage, "RIFE's ncnn graph has its flow scale built in; scale=0.5 needs the native "
                                    "model (a flownet.pkl)");
    const int64_t h = a.size(2), w = a.size(3);
    at::Tensor pa = infer::pad_to_multiple(a.to(device_, dtype_), info_.size_multiple);
    at::Tensor pb = infer::pad_to_multiple(b.to(device_, dtype_), info_.size_multiple);
    at::Tensor timestep = at::full({a.size(0), 1, pa.size(2), pa.size(3)}, t, pa.options());
    at::Tensor out = net_->run({{"in0", pa}, {"in1", pb}, {"in2", timestep}}, {"out0"}).at("out0");
    return out.narrow(2, 0, h).narrow(3, 0, w).to(a.scalar_type());
  }

  void to(c10::Device device, c10::ScalarType dtype) override {
    net_->to(device, dtype);
    device_ = device;
    dtype_ = dtype;
  }

 private:
  std::unique_ptr<ncnn::NcnnModel> net_;
  InterpolatorInfo info_;
  c10::Device device_ = c10::kCPU;
  c10::ScalarType dtype_ = at::kFloat;
};

}  // namespace

void register_rife_ncnn_layers() {
  static std::once_flag once;
  std::call_once(once, [] {
    ncnn::register_layer("rife.Warp", [](const ncnn::LayerSpec& spec) { return std::make_unique<WarpOp>(spec); });
  });
}

std::unique_ptr<FrameInterpolator> load_rife_ncnn(const std::filesystem::path& param, const std::filesystem::path& bin) {
  register_rife_ncnn_layers();
  ncnn::NcnnModelOptions options;
  options.input_blob = "in0";
  options.output_blob = "out0";
  options.probe = false;
  auto net = ncnn::NcnnModel::load(param, bin, options);
  return std::make_unique<RifeNcnn>(std::move(net));
}

}  // namespace framelift::models
