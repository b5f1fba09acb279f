#pragma once
// Training checkpoints wrap the weights: BasicSR saves {"params_ema": ..., "params": ...},
// Lightning {"state_dict": ...}, others {"model"|"net"|"g": ...}, and DataParallel prefixes every
// key with "module.". These rules find the tensor dict inside such a wrapper.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weights/state_dict.h"

namespace framelift::weights {

// Wrapper keys in order of preference: EMA weights are the ones meant for inference.
inline constexpr std::string_view kWrapperKeys[] = {"params_ema", "params", "state_dict",
                                                    "model",      "net",    "g"};

// Given the keys at one dict level whose values are dicts, and how many tensors that level holds
// directly: the key to descend into, or nullopt when this level is the state dict itself. A level
// without tensors and with a single nested dict is descended into too (e.g. {"net_g_ema": {...}}).
std::optional<std::string> weights_key(const std::vector<std::string>& dict_keys,
                                       size_t tensor_count);

// Maximum wrapper nesting followed; deeper means a malformed (or cyclic) checkpoint.
inline constexpr int kMaxWrapperDepth = 8;
// How deep a TorchScript archive's submodules may nest (FILM's deepest parameter is 8 levels down).
inline constexpr int kMaxModuleDepth = 64;

// A checkpoint reduced to what matters: tensors and nested string-keyed dicts. Other values (epoch
// numbers, optimizer lists, hyper-parameter strings) are dropped when it is built.
struct CheckpointTree {
  std::string name;  // the key this dict has in its parent ("" for the root)
  StateDict tensors;
  std::vector<CheckpointTree> children;
};

// Picks the weights out of a nested checkpoint, then strips "module." prefixes. Throws Error(Model)
// "<source>: ..." when nothing is left or stripping makes two keys collide.
StateDict unwrap_state_dict(const CheckpointTree& tree, const std::string& source = "checkpoint");
// For already-flat dicts (e.g. from safetensors): strips "module." prefixes only.
StateDict unwrap_state_dict(StateDict flat, const std::string& source = "checkpoint");

}  // namespace framelift::weights
