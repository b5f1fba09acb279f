#include <ATen/ATen.h>

#include "library/model_locator.h"
#include "models/model_files.h"
#include "models/ncnn/layer_registry.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/ncnn_bin.h"
#include "weights/ncnn_param.h"

namespace fs = std::filesystem;

namespace framelift::models {
namespace {

weights::StateDict ncnn_weights(const weights::NcnnGraph& graph, const fs::path& param) {
  weights::NcnnBinOptions options;
  options.weightless_custom_types = ncnn::custom_layer_types();
  return weights::ncnn_to_state_dict(graph, fs::path(param).replace_extension(".bin"), options);
}

}  // namespace

std::unique_ptr<ImageModel> open_blended_model(const std::string& a, const std::string& b, double t) {
  const fs::path pa = library::resolve_model_file(a), pb = library::resolve_model_file(b);
  if (pa.extension() != ".param" || pb.extension() != ".param")
    throw Error(ErrorKind::Model, str(a, " and ", b, ": blending weight sets needs two ncnn models of one network"));
  weights::NcnnGraph graph = weights::parse_ncnn_param(pa);
  weights::StateDict wa = ncnn_weights(graph, pa);
  const weights::StateDict wb = ncnn_weights(weights::parse_ncnn_param(pb), pb);
  if (wa.size() != wb.size())
    throw Error(ErrorKind::Model, str(a, " and ", b, ": not the same network (", wa.size(), " and ", wb.size(), " weight tensors)"));
  for (auto& [name, tensor] : wa) {
    auto other = wb.find(name);
    if (other == wb.end() || !other->second.sizes().equals(tensor.sizes()))
      throw Error(ErrorKind::Model, str(a, " and ", b, ": not the same network (weight ", name, " differs)"));
    tensor = at::lerp(tensor.to(at::kFloat), other->second.to(at::kFloat), t);
  }
  return open_ncnn_model(std::move(graph), wa);
}

}  // namespace framelift::models
