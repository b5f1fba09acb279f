#include "jobs/json_seal.h"

#include "net/sha256.h"

namespace framelift::jobs {
namespace {

constexpr const char* kSealKey = "seal";

std::string digest_without_seal(nlohmann::json object) {
  object.erase(kSealKey);
  net::Sha256 hash;
  hash.update(object.dump());  // keys sorted, numbers in their shortest round-trip form: stable
  return hash.hex();
}

}  // namespace

void seal_json(nlohmann::json& object) { object[kSealKey] = digest_without_seal(object); }

SealState check_json_seal(const nlohmann::json& object) {
  if (!object.is_object()) return SealState::Broken;
  auto it = object.find(kSealKey);
  if (it == object.end()) return SealState::Missing;
  if (!it->is_string() || it->get<std::string>() != digest_without_seal(object)) return SealState::Broken;
  return SealState::Valid;
}

}  // namespace framelift::jobs
