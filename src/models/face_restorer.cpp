#include "models/face_restorer.h"

#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

class FaceCrops : public ImageModel {
 public:
  FaceCrops(std::unique_ptr<ImageModel> net, std::string source) : net_(std::move(net)), source_(std::move(source)) {}
  const ModelInfo& info() const override { return net_->info(); }
  void to(c10::Device device, c10::ScalarType dtype) override { net_->to(device, dtype); }
  at::Tensor forward(const at::Tensor& input) override {
    const int64_t s = info().size_multiple;
    if (input.dim() == 4 && (input.size(2) != s || input.size(3) != s))
      throw Error(ErrorKind::Usage, str(source_, ": ", info().arch, " restores ", s, "x", s, " aligned face crops, not ", input.size(3), "x",
                                        input.size(2)));
    return net_->forward(input);
  }
  ImageModel& net() { return *net_; }

 private:
  std::unique_ptr<ImageModel> net_;
  std::string source_;
};

}  // namespace

std::unique_ptr<ImageModel> face_crops_only(std::unique_ptr<ImageModel> net, std::string source) {
  return std::make_unique<FaceCrops>(std::move(net), std::move(source));
}

FidelityWeighted* fidelity_control(ImageModel& model) {
  if (auto* crops = dynamic_cast<FaceCrops*>(&model)) return fidelity_control(crops->net());
  return dynamic_cast<FidelityWeighted*>(&model);
}

}  // namespace framelift::models
