#include "models/face_restorer.h"

#include "models/exact_size.h"

namespace framelift::models {

std::unique_ptr<ImageModel> face_crops_only(std::unique_ptr<ImageModel> net, std::string source) {
  return exact_size_only(std::move(net), std::move(source), "restores", "aligned face crops");
}

FidelityWeighted* fidelity_control(ImageModel& model) { return dynamic_cast<FidelityWeighted*>(&inner_network(model)); }

}  // namespace framelift::models
