#include "models/exact_size.h"

#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

class ExactSize : public ImageModel {
 public:
  ExactSize(std::unique_ptr<ImageModel> net, std::string source, std::string verb, std::string noun)
      : net_(std::move(net)), source_(std::move(source)), verb_(std::move(verb)), noun_(std::move(noun)) {}
  const ModelInfo& info() const override { return net_->info(); }
  void to(c10::Device device, c10::ScalarType dtype) override { net_->to(device, dtype); }
  at::Tensor forward(const at::Tensor& input) override {
    const int64_t s = info().size_multiple;
    if (input.dim() == 4 && (input.size(2) != s || input.size(3) != s))
      throw Error(ErrorKind::Usage,
                  str(source_, ": ", info().arch, " ", verb_, " ", s, "x", s, " ", noun_, ", not ", input.size(3), "x", input.size(2)));
    return net_->forward(input);
  }
  ImageModel& net() { return *net_; }

 private:
  std::unique_ptr<ImageModel> net_;
  std::string source_, verb_, noun_;
};

}  // namespace

std::unique_ptr<ImageModel> exact_size_only(std::unique_ptr<ImageModel> net, std::string source, std::string verb, std::string noun) {
  return std::make_unique<ExactSize>(std::move(net), std::move(source), std::move(verb), std::move(noun));
}

ImageModel& inner_network(ImageModel& model) {
  if (auto* wrapped = dynamic_cast<ExactSize*>(&model)) return inner_network(wrapped->net());
  return model;
}

}  // namespace framelift::models
