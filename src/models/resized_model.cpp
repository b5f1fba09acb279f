#include "models/resized_model.h"

#include <ATen/ATen.h>

namespace framelift::models {
namespace {

class ResizedModel : public ImageModel {
 public:
  ResizedModel(std::unique_ptr<ImageModel> net, int scale) : net_(std::move(net)), info_(net_->info()) {
    info_.scale = scale;
  }
  const ModelInfo& info() const override { return info_; }
  at::Tensor forward(const at::Tensor& input) override {
    const at::Tensor y = net_->forward(input);
    // In fp32: libtorch 1.13 has no reduced-precision CPU bicubic, and the resize is cheap.
    const at::Tensor r = at::upsample_bicubic2d(y.to(at::kFloat), {input.size(2) * info_.scale, input.size(3) * info_.scale},
                                                /*align_corners=*/false);
    return r.to(y.scalar_type());
  }
  void to(c10::Device device, c10::ScalarType dtype) override { net_->to(device, dtype); }

 private:
  std::unique_ptr<ImageModel> net_;
  ModelInfo info_;
};

}  // namespace

std::unique_ptr<ImageModel> resized_model(std::unique_ptr<ImageModel> net, int scale) {
  if (net->info().scale == scale) return net;
  return std::make_unique<ResizedModel>(std::move(net), scale);
}

}  // namespace framelift::models
