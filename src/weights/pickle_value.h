#pragma once
// The values our restricted unpickler produces. Python objects are never created: containers are
// plain nodes, globals stay names, and tensors stay references into storages (TensorRef) that a
// format-specific loader materialises later. That keeps the unpickler free of libtorch and lets the
// legacy format, whose storage bytes come after the pickle, share the same code.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "weights/dtype.h"

namespace framelift::weights::pickle {

struct None {};
struct Bytes {
  std::string data;
};
// An integer wider than 64 bits (LONG1/LONG4), kept as little-endian two's complement bytes; the
// legacy checkpoint magic number is one.
struct BigInt {
  std::string bytes;
};
struct Global {
  std::string module;
  std::string name;
};
// A persistent id ('storage', torch.FloatStorage, key, location, numel[, view]) resolved to data.
struct StorageRef {
  std::string key;
  Dtype dtype = Dtype::F32;
  int64_t numel = 0;
  // Legacy files may point a tensor at a slice of a shared storage.
  int64_t view_offset = 0;
  std::optional<int64_t> view_numel;
};
// torch._utils._rebuild_tensor_v2(storage, offset, sizes, strides, ...), not yet materialised.
struct TensorRef {
  StorageRef storage;
  int64_t offset = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

struct Node;

// Containers are referenced, not copied: pickles memoise a dict and fill it later, and copying
// would let a tiny hostile pickle expand exponentially through BINGET.
using Value = std::variant<None, bool, int64_t, double, std::string, Bytes, BigInt, Global,
                           StorageRef, TensorRef, Node*>;

// A tuple, list or dict. Dict entries keep pickle order; string keys are indexed so that SETITEM
// replaces like Python does without a quadratic scan.
struct Node {
  enum class Kind { Tuple, List, Dict };
  Kind kind = Kind::List;
  std::vector<Value> items;                        // Tuple, List
  std::vector<std::pair<Value, Value>> entries;    // Dict
  // Made by the first string key: a pickle bomb of empty lists pays 8 bytes per node for it,
  // not an empty hash map's 56.
  std::unique_ptr<std::unordered_map<std::string, size_t>> string_index;
  // A Dict made for an object of a TorchScript module class (__torch__.*): its attributes, set by
  // BUILD. Only read where the pickle is a TorchScript archive's (Limits::torchscript_modules).
  bool module = false;

  void set(Value key, Value value);
  const Value* get(std::string_view key) const;
};

// Result of unpickling one pickle. The nodes live in `arena` (flat, so neither destruction nor a
// cyclic pickle can recurse or leak); `root` and every Node* point into it.
struct Unpickled {
  std::vector<std::unique_ptr<Node>> arena;
  Value root;
  size_t consumed = 0;  // bytes up to and including STOP; the legacy format chains pickles
  std::vector<StorageRef> storages;  // every persistent id seen, in order
};

template <class T>
const T* as(const Value& value) {
  return std::get_if<T>(&value);
}
// The node if `value` is a container of that kind, else nullptr.
const Node* as_node(const Value& value, Node::Kind kind);
std::string_view type_name(const Value& value);

}  // namespace framelift::weights::pickle
