#include "models/architecture_registry.h"

#include <cmath>
#include <exception>
#include <mutex>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "arch/declaration.h"
#include "models/builtin_architectures.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/load_weights.h"

namespace framelift::models {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<Architecture> entries;
};

Registry& registry() {
  static Registry r;
  return r;
}

void ensure_builtins() {
  static std::once_flag once;
  std::call_once(once, register_builtin_architectures);
}

std::string tried_names(const std::vector<Architecture>& archs) {
  std::string out;
  for (const auto& a : archs) out += (out.empty() ? "" : ", ") + a.name;
  return out;
}

// A detection checked against its declaration (src/arch/constraints.h): what a builder, a cost
// walk or `models info` divides by or allocates from was read off an untrusted file. One place, so
// that no caller of detect() can reach a network with zero heads or a 2^40-wide layer.
DetectedArch checked(DetectedArch d, const std::string& source) {
  arch::ArchParams all = d.params;
  all["scale"] = d.scale;
  all["in_channels"] = d.in_channels;
  all["out_channels"] = d.out_channels;
  arch::check_shapes(d.arch, all, source);
  return d;
}

// An architecture whose detector recognised the keys: what it detected, or why it refused the
// shapes (a detector that knows the keys but not the shapes throws, so that no other one guesses).
struct Claim {
  Architecture arch;
  std::optional<DetectedArch> detected;
  std::exception_ptr refusal;
};

std::vector<Claim> claims_of(const std::vector<Architecture>& archs, const weights::StateDict& dict,
                             const std::string& source) {
  std::vector<Claim> claims;
  for (const auto& a : archs) {
    try {
      if (auto found = a.detect(dict, source)) claims.push_back({a, std::move(found), nullptr});
    } catch (const Error&) {
      claims.push_back({a, std::nullopt, std::current_exception()});
    }
  }
  return claims;
}

// The one claim, checked; nullopt when none. Detectors are meant to be exclusive (each reference
// checkpoint is claimed by exactly one: DetectionExclusive), so a file two of them claim is refused
// by name rather than given to whichever was registered first.
std::optional<std::pair<DetectedArch, Architecture>> only_claim(const weights::StateDict& dict,
                                                                const std::string& source) {
  const std::vector<Claim> claims = claims_of(architectures(), dict, source);
  if (claims.empty()) return std::nullopt;
  if (claims.size() > 1) {
    std::string names;
    for (const Claim& c : claims) names += (names.empty() ? "" : " and ") + c.arch.name;
    throw Error(ErrorKind::Model, str(source, ": the tensors fit more than one architecture (", names,
                                      "); framelift will not guess which network they are for"));
  }
  if (claims.front().refusal) std::rethrow_exception(claims.front().refusal);
  return std::pair{checked(*claims.front().detected, source), claims.front().arch};
}

std::pair<DetectedArch, Architecture> detect_or_throw(const weights::StateDict& dict, const std::string& source) {
  if (dict.empty()) throw Error(ErrorKind::Model, str(source, ": no tensors in the weight file"));
  if (auto claim = only_claim(dict, source)) return *claim;
  throw Error(ErrorKind::Model, str(source, ": unsupported architecture (", dict.size(), " tensors, first key '",
                                    dict.begin()->first, "'; tried ", tried_names(architectures()), ")"));
}

}  // namespace

void register_architecture(Architecture arch) {
  // A network without a declaration would run but be unpriced, untiled by the planner and
  // undescribed: refuse it where the mistake is made.
  if (!arch::find_declaration(arch.name))
    throw std::logic_error("architecture " + arch.name + " has no declaration (src/arch/architecture_list.h)");
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  for (auto& existing : r.entries) {
    if (existing.name == arch.name) {
      existing = std::move(arch);
      return;
    }
  }
  r.entries.push_back(std::move(arch));
}

std::vector<Architecture> architectures() {
  ensure_builtins();
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  return r.entries;
}

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  if (auto claim = only_claim(dict, source)) return claim->first;
  return std::nullopt;
}

std::unique_ptr<ImageModel> build_model(const weights::StateDict& dict, const std::string& source) {
  auto [detected, arch] = detect_or_throw(dict, source);
  return arch.build(dict, detected, source);
}

std::unique_ptr<ImageModel> load_model(const std::filesystem::path& weights_file) {
  return build_model(weights::load_weights(weights_file), weights_file.string());
}

std::string describe_model(const weights::StateDict& dict, const std::string& source) {
  auto [detected, arch] = detect_or_throw(dict, source);
  int64_t params = 0;
  for (const auto& [key, t] : dict) params += t.numel();
  nlohmann::ordered_json hyper = nlohmann::ordered_json::object();
  for (const auto& [k, v] : detected.params) {
    if (std::trunc(v) == v) hyper[k] = static_cast<int64_t>(v);
    else hyper[k] = v;
  }
  if (!detected.variant.empty()) hyper["variant"] = detected.variant;
  nlohmann::ordered_json j = {{"arch", detected.arch},
                              {"description", arch::declaration(detected.arch).description},
                              {"scale", detected.scale},
                              {"in_channels", detected.in_channels},
                              {"out_channels", detected.out_channels},
                              {"params", params},
                              {"hyperparameters", hyper}};
  return j.dump();
}

}  // namespace framelift::models
