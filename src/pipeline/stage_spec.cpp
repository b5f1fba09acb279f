#include "pipeline/stage_spec.h"

#include <algorithm>
#include <cstdlib>

#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos - start));
    if (pos == std::string::npos) return parts;
    start = pos + 1;
  }
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

void add_option(StageSpec& spec, const std::string& item, std::map<std::string, std::string>& values) {
  size_t eq = item.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error(ErrorKind::Usage, str("pipeline: expected KEY=VALUE in stage '", spec.name, "', got '", item, "'"));
  values[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
}

}  // namespace

const std::string* StageOptions::find(const std::string& key) const {
  if (auto it = values_.find(key); it != values_.end()) return &it->second;
  if (auto it = defaults_.find(key); it != defaults_.end()) return &it->second;
  return nullptr;
}

std::string StageOptions::get(const std::string& key, const std::string& fallback) const {
  const std::string* v = find(key);
  return v ? *v : fallback;
}

double StageOptions::get_double(const std::string& key, double fallback) const {
  const std::string* text = find(key);
  if (!text) return fallback;
  char* end = nullptr;
  double v = std::strtod(text->c_str(), &end);
  if (text->empty() || *end != '\0')
    throw Error(ErrorKind::Usage, str("stage ", stage_, ": option ", key, "=", *text, " is not a number"));
  return v;
}

int StageOptions::get_int(const std::string& key, int fallback) const {
  double v = get_double(key, fallback);
  if (v != double(int(v))) throw Error(ErrorKind::Usage, str("stage ", stage_, ": option ", key, " must be an integer"));
  return int(v);
}

void StageOptions::expect_only(const std::vector<std::string>& known) const {
  for (const auto& [k, v] : values_) {
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      std::string list;
      for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
      throw Error(ErrorKind::Usage, str("stage ", stage_, ": unknown option '", k, "' (options: ", list, ")"));
    }
  }
}

std::vector<StageSpec> parse_pipeline(const std::string& text) {
  std::vector<StageSpec> specs;
  std::vector<std::map<std::string, std::string>> values;
  for (const std::string& raw : split(text, ',')) {
    std::string item = trim(raw);
    if (item.empty()) continue;
    size_t colon = item.find(':'), eq = item.find('=');
    bool continues = eq != std::string::npos && (colon == std::string::npos || eq < colon);
    if (continues) {
      if (specs.empty()) throw Error(ErrorKind::Usage, str("pipeline: '", item, "' comes before any stage name"));
      add_option(specs.back(), item, values.back());
      continue;
    }
    std::vector<std::string> parts = split(item, ':');
    specs.push_back({trim(parts[0]), {}});
    values.emplace_back();
    for (size_t i = 1; i < parts.size(); ++i) add_option(specs.back(), trim(parts[i]), values.back());
  }
  for (size_t i = 0; i < specs.size(); ++i) specs[i].options = StageOptions(specs[i].name, values[i]);
  return specs;
}

}  // namespace framelift::pipeline
