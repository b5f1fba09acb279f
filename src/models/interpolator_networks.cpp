#include "models/interpolator_networks.h"

#include <nlohmann/json.hpp>

#include "arch/declaration.h"

namespace framelift::models {

const std::vector<InterpolatorNetwork>& interpolator_networks() {
  static const std::vector<InterpolatorNetwork> rows = {ifrnet_interpolator(), film_interpolator(), gmfss_interpolator()};
  return rows;
}

std::string describe_interpolator(const std::string& arch, const std::string& variant, int size_multiple,
                                  const weights::StateDict& dict, const arch::ArchParams& params,
                                  const std::vector<std::pair<std::string, std::string>>& extra) {
  int64_t weights = 0;
  for (const auto& [key, t] : dict) weights += t.numel();
  nlohmann::ordered_json hyper = nlohmann::ordered_json::object();
  for (const auto& [k, v] : params) hyper[k] = static_cast<int64_t>(v);
  hyper["variant"] = variant;
  nlohmann::ordered_json j = {{"arch", arch},
                              {"description", arch::declaration(arch).description},
                              {"variant", variant},
                              {"scale", 1},
                              {"in_channels", 3},
                              {"out_channels", 3},
                              {"frames_per_call", 2},
                              {"size_multiple", size_multiple},
                              {"params", weights},
                              {"hyperparameters", hyper}};
  for (const auto& [key, value] : extra) j[key] = value;
  return j.dump();
}

const InterpolatorNetwork* find_interpolator_network(const weights::StateDict& dict, const std::string& source,
                                                     arch::ArchParams* params) {
  for (const InterpolatorNetwork& row : interpolator_networks())
    if (std::optional<arch::ArchParams> p = row.detect(dict, source)) {
      if (params) *params = std::move(*p);
      return &row;
    }
  return nullptr;
}

}  // namespace framelift::models
