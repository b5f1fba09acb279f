#include <map>
#include <set>

#include "util/error.h"
#include "util/str.h"
#include "weights/dtype_torch.h"
#include "weights/pth_checkpoint.h"
#include "weights/tensor_view.h"
#include "weights/unwrap.h"

namespace framelift::weights {

using pickle::Node;

size_t max_state_dict_bytes(size_t file_size) {
  // Each storage once (at most the file) plus as much again for views that need a copy (tied or
  // sliced weights), over a floor for tiny files.
  constexpr size_t kFloor = size_t{64} << 20;
  return kFloor + 2 * file_size;
}

namespace {

using NamedTensors = std::vector<std::pair<std::string, const pickle::TensorRef*>>;

// A TorchScript module's parameters and buffers: the tensors among its attributes and its
// submodules', named by their path from the root as named_parameters() names them, in attribute
// order. A module reached twice (shared, or a cycle a hostile pickle makes) is read once.
void module_tensors(const Node& module, const std::string& prefix, int depth, std::set<const Node*>& seen, NamedTensors& out,
                    const std::string& label) {
  if (depth > kMaxModuleDepth) throw Error(ErrorKind::Model, str(label, ": TorchScript modules nest deeper than ", kMaxModuleDepth));
  if (!seen.insert(&module).second) return;
  for (const auto& [key, value] : module.entries) {
    const auto* name = pickle::as<std::string>(key);
    if (!name) continue;
    if (const auto* tensor = pickle::as<pickle::TensorRef>(value)) out.emplace_back(prefix + *name, tensor);
    const Node* const* child = std::get_if<Node*>(&value);
    if (child && (*child)->module) module_tensors(**child, prefix + *name + ".", depth + 1, seen, out, label);
  }
}

// The tensors of the state dict a checkpoint holds: a TorchScript archive's module tree, or the
// dict below any wrapper dicts (unwrap.h).
NamedTensors checkpoint_tensors(const PickledCheckpoint& checkpoint, const std::string& label) {
  NamedTensors out;
  if (checkpoint.torchscript) {
    const Node* const* root = std::get_if<Node*>(&checkpoint.pickle.root);
    if (!root || !(*root)->module) throw Error(ErrorKind::Model, str(label, ": TorchScript archive without a module at its root"));
    std::set<const Node*> seen;
    module_tensors(**root, "", 0, seen, out, label);
    return out;
  }
  const pickle::Value* level = &checkpoint.pickle.root;
  const Node* dict = nullptr;
  for (int depth = 0;; ++depth) {
    dict = pickle::as_node(*level, Node::Kind::Dict);
    if (!dict)
      throw Error(ErrorKind::Model, str(label, ": checkpoint holds a ", pickle::type_name(*level),
                                        " where a dict of tensors was expected"));
    std::vector<std::string> dict_keys;
    size_t tensors = 0;
    for (const auto& [key, value] : dict->entries) {
      const auto* name = pickle::as<std::string>(key);
      if (!name) continue;
      if (pickle::as_node(value, Node::Kind::Dict)) dict_keys.push_back(*name);
      if (pickle::as<pickle::TensorRef>(value)) ++tensors;
    }
    auto next = weights_key(dict_keys, tensors);
    if (!next) break;
    if (depth == kMaxWrapperDepth)
      throw Error(ErrorKind::Model, str(label, ": checkpoint nests deeper than ",
                                        kMaxWrapperDepth, " wrapper dicts"));
    level = dict->get(*next);
  }
  for (const auto& [key, value] : dict->entries) {
    const auto* name = pickle::as<std::string>(key);
    const auto* tensor = pickle::as<pickle::TensorRef>(value);
    if (name && tensor) out.emplace_back(*name, tensor);
  }
  return out;
}

}  // namespace

StateDict state_dict_from_checkpoint(const PickledCheckpoint& checkpoint, const std::string& label) {
  std::map<std::string, at::Tensor> storages;  // shared by tensors that view the same storage
  CopyBudget budget(max_state_dict_bytes(checkpoint.file_size), label);
  StateDict flat;
  for (const auto& [name, tensor] : checkpoint_tensors(checkpoint, label)) {
    const auto& ref = tensor->storage;
    auto bytes = checkpoint.storages.find(ref.key);
    if (bytes == checkpoint.storages.end())
      throw Error(ErrorKind::Model, str(label, ": tensor ", name, ": storage ", ref.key, " is missing"));
    auto cached = storages.find(ref.key);
    if (cached == storages.end())
      cached = storages.emplace(ref.key, storage_tensor(bytes->second, ref.dtype, label, budget)).first;
    if (cached->second.scalar_type() != to_scalar_type(ref.dtype))
      throw Error(ErrorKind::Model, str(label, ": storage ", ref.key, " is used with two dtypes"));
    flat[name] = materialize(*tensor, cached->second, name, label, budget);
  }
  return unwrap_state_dict(std::move(flat), label);
}

}  // namespace framelift::weights
