#pragma once
// The hyper-parameters of one network, as its architecture's detector reads them off a
// checkpoint's shapes ("num_feat" 64, "nb" 23, "window_size" 8; flags as 0 or 1) and as the
// cost walks, the builders and `framelift models info` take them: typed numbers in the order
// the architecture lists them, never strings.
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace framelift::arch {

class ArchParams {
 public:
  using Item = std::pair<std::string, double>;

  ArchParams() = default;
  ArchParams(std::initializer_list<Item> items);

  // The value of `name`, appended (as 0) when the set has none.
  double& operator[](const std::string& name);
  double get(const std::string& name, double fallback) const;
  bool contains(const std::string& name) const;

  std::vector<Item>::const_iterator begin() const { return items_.begin(); }
  std::vector<Item>::const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  bool operator==(const ArchParams&) const = default;

 private:
  std::vector<Item> items_;
};

// A JSON object {"nb": 23, ...} in the set's order (profile manifests record them). Whole
// numbers are written as integers.
void to_json(nlohmann::json& j, const ArchParams& p);
void from_json(const nlohmann::json& j, ArchParams& p);

}  // namespace framelift::arch
