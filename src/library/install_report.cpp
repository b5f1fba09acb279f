#include "library/install_report.h"

#include <algorithm>

namespace framelift::library {

void InstallReport::merge(InstallReport&& other) {
  for (auto& m : other.installed) installed.push_back(std::move(m));
  for (auto& n : other.unchanged) unchanged.push_back(std::move(n));
  for (auto& p : other.problems) problems.push_back(std::move(p));
  for (auto& n : other.notes) notes.push_back(std::move(n));
}

bool InstallReport::touched(const std::string& name) const {
  return std::any_of(installed.begin(), installed.end(), [&](auto& m) { return m.name == name; }) ||
         std::find(unchanged.begin(), unchanged.end(), name) != unchanged.end();
}

}  // namespace framelift::library
