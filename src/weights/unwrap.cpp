#include "weights/unwrap.h"

#include <algorithm>

#include "util/error.h"
#include "util/str.h"

namespace framelift::weights {

std::optional<std::string> weights_key(const std::vector<std::string>& dict_keys,
                                       size_t tensor_count) {
  for (std::string_view wrapper : kWrapperKeys)
    if (std::find(dict_keys.begin(), dict_keys.end(), wrapper) != dict_keys.end())
      return std::string(wrapper);
  if (tensor_count == 0 && dict_keys.size() == 1) return dict_keys.front();
  return std::nullopt;
}

StateDict unwrap_state_dict(const CheckpointTree& tree, const std::string& source) {
  const CheckpointTree* level = &tree;
  for (int depth = 0;; ++depth) {
    std::vector<std::string> keys;
    for (const auto& child : level->children) keys.push_back(child.name);
    auto next = weights_key(keys, level->tensors.size());
    if (!next) break;
    if (depth == kMaxWrapperDepth)
      throw Error(ErrorKind::Model, str(source, ": checkpoint nests deeper than ",
                                        kMaxWrapperDepth, " wrapper dicts"));
    auto it = std::find_if(level->children.begin(), level->children.end(),
                           [&](const CheckpointTree& child) { return child.name == *next; });
    level = &*it;
  }
  return unwrap_state_dict(level->tensors, source);
}

StateDict unwrap_state_dict(StateDict flat, const std::string& source) {
  if (flat.empty()) throw Error(ErrorKind::Model, str(source, ": no tensors found in checkpoint"));
  constexpr std::string_view kPrefix = "module.";
  StateDict out;
  for (auto& [key, tensor] : flat) {
    std::string_view name = key;
    while (name.starts_with(kPrefix) && name.size() > kPrefix.size()) name.remove_prefix(kPrefix.size());
    if (!out.emplace(std::string(name), std::move(tensor)).second)
      throw Error(ErrorKind::Model, str(source, ": keys '", key, "' and '", name,
                                        "' collide once the 'module.' prefix is removed"));
  }
  return out;
}

}  // namespace framelift::weights
