#include "arch/params.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace framelift::arch {

ArchParams::ArchParams(std::initializer_list<Item> items) {
  for (const auto& [name, value] : items) (*this)[name] = value;
}

double& ArchParams::operator[](const std::string& name) {
  auto it = std::find_if(items_.begin(), items_.end(), [&](const Item& i) { return i.first == name; });
  if (it != items_.end()) return it->second;
  return items_.emplace_back(name, 0.0).second;
}

double ArchParams::get(const std::string& name, double fallback) const {
  auto it = std::find_if(items_.begin(), items_.end(), [&](const Item& i) { return i.first == name; });
  return it == items_.end() ? fallback : it->second;
}

bool ArchParams::contains(const std::string& name) const {
  return std::any_of(items_.begin(), items_.end(), [&](const Item& i) { return i.first == name; });
}

void to_json(nlohmann::json& j, const ArchParams& p) {
  j = nlohmann::json::object();
  for (const auto& [name, value] : p) {
    if (std::trunc(value) == value && std::fabs(value) < 1e15) j[name] = static_cast<int64_t>(value);
    else j[name] = value;
  }
}

void from_json(const nlohmann::json& j, ArchParams& p) {
  p = ArchParams();
  for (const auto& [name, value] : j.items())
    if (value.is_number()) p[name] = value.get<double>();
    else if (value.is_boolean()) p[name] = value.get<bool>() ? 1 : 0;
}

}  // namespace framelift::arch
