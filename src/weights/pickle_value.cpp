#include "weights/pickle_value.h"

namespace framelift::weights::pickle {

void Node::set(Value key, Value value) {
  if (const auto* text = std::get_if<std::string>(&key)) {
    if (!string_index) string_index = std::make_unique<std::unordered_map<std::string, size_t>>();
    auto [it, inserted] = string_index->try_emplace(*text, entries.size());
    if (!inserted) {
      entries[it->second].second = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

const Value* Node::get(std::string_view key) const {
  if (!string_index) return nullptr;
  auto it = string_index->find(std::string(key));
  return it == string_index->end() ? nullptr : &entries[it->second].second;
}

const Node* as_node(const Value& value, Node::Kind kind) {
  auto* const* node = std::get_if<Node*>(&value);
  return node && *node && (*node)->kind == kind ? *node : nullptr;
}

std::string_view type_name(const Value& value) {
  struct Visitor {
    std::string_view operator()(const None&) const { return "None"; }
    std::string_view operator()(bool) const { return "bool"; }
    std::string_view operator()(int64_t) const { return "int"; }
    std::string_view operator()(double) const { return "float"; }
    std::string_view operator()(const std::string&) const { return "str"; }
    std::string_view operator()(const Bytes&) const { return "bytes"; }
    std::string_view operator()(const BigInt&) const { return "int"; }
    std::string_view operator()(const Global&) const { return "global"; }
    std::string_view operator()(const StorageRef&) const { return "storage"; }
    std::string_view operator()(const TensorRef&) const { return "tensor"; }
    std::string_view operator()(const Node* node) const {
      switch (node->kind) {
        case Node::Kind::Tuple: return "tuple";
        case Node::Kind::List: return "list";
        case Node::Kind::Dict: return "dict";
      }
      return "node";
    }
  };
  return std::visit(Visitor{}, value);
}

}  // namespace framelift::weights::pickle
