#include "models/state_dict_keys.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace framelift::models {

std::set<int> key_indices(const weights::StateDict& dict, std::string_view prefix) {
  std::set<int> out;
  for (auto it = dict.lower_bound(std::string(prefix)); it != dict.end(); ++it) {
    std::string_view key = it->first;
    if (key.substr(0, prefix.size()) != prefix) break;  // map order: all prefixed keys are adjacent
    std::string_view rest = key.substr(prefix.size());
    int n = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
    if (ec == std::errc() && end != rest.data() && end < rest.data() + rest.size() && *end == '.') out.insert(n);
  }
  return out;
}

std::optional<int64_t> dim_of(const weights::StateDict& dict, const std::string& key, int64_t rank, int64_t axis) {
  auto it = dict.find(key);
  if (it == dict.end() || it->second.dim() != rank) return std::nullopt;
  return it->second.size(axis);
}

bool has_keys(const weights::StateDict& dict, std::initializer_list<std::string> keys) {
  for (const std::string& key : keys)
    if (!dict.count(key)) return false;
  return true;
}

bool is_conv(const weights::StateDict& dict, const std::string& key) {
  auto it = dict.find(key);
  return it != dict.end() && it->second.dim() == 4;
}

std::optional<int> shuffle_factor(int64_t n, int64_t base) {
  if (base <= 0 || n % base != 0) return std::nullopt;
  const int64_t sq = n / base;
  // n is a tensor's dimension, up to 2^63: a root by sqrt, not by counting up to it.
  const int64_t r = std::llround(std::sqrt(double(sq)));
  for (int64_t s = std::max<int64_t>(1, r - 1); s <= r + 1 && s <= 3037000499; ++s)
    if (s * s == sq) return s <= 65536 ? std::optional<int>(static_cast<int>(s)) : std::nullopt;
  return std::nullopt;
}

}  // namespace framelift::models
