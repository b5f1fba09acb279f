#include "models/ncnn/ncnn_op.h"

#include <ATen/ATen.h>

#include "util/error.h"
#include "util/str.h"

namespace framelift::models::ncnn {

at::Tensor LayerSpec::optional_weight(const std::string& role) const {
  auto it = weights.find(layer.name + "." + role);
  if (it == weights.end()) return {};
  return it->second.to(at::kFloat).contiguous();
}

at::Tensor LayerSpec::weight(const std::string& role) const {
  auto t = optional_weight(role);
  if (!t.defined()) fail(str("weights '", role, "' missing from the .bin"));
  return t;
}

void LayerSpec::fail(const std::string& problem) const {
  throw Error(ErrorKind::Model, str(source, ": layer ", layer.name, " (", layer.type, "): ", problem));
}

}  // namespace framelift::models::ncnn
