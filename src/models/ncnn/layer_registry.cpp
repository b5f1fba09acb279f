#include "models/ncnn/layer_registry.h"

#include <mutex>

#include "models/ncnn/builtin_layers.h"

namespace framelift::models::ncnn {
namespace {

// Built-ins are added by explicit calls, not static registrars: objects in a static library that
// nothing references are dropped by the linker, registrars included.
const FactoryTable& builtins() {
  static const FactoryTable table = [] {
    FactoryTable t;
    add_conv_layers(t);
    add_activation_layers(t);
    add_arithmetic_layers(t);
    add_shape_layers(t);
    add_resample_layers(t);
    return t;
  }();
  return table;
}

struct CustomTable {
  std::mutex mutex;
  FactoryTable table;
};
CustomTable& customs() {
  static CustomTable t;
  return t;
}

}  // namespace

void register_layer(const std::string& type, LayerFactory factory) {
  auto& c = customs();
  std::lock_guard lock(c.mutex);
  c.table[type] = std::move(factory);
}

std::optional<LayerFactory> find_layer(const std::string& type) {
  {
    auto& c = customs();
    std::lock_guard lock(c.mutex);
    auto it = c.table.find(type);
    if (it != c.table.end()) return it->second;
  }
  auto it = builtins().find(type);
  if (it != builtins().end()) return it->second;
  return std::nullopt;
}

std::set<std::string> custom_layer_types() {
  auto& c = customs();
  std::lock_guard lock(c.mutex);
  std::set<std::string> out;
  for (const auto& [type, factory] : c.table) out.insert(type);
  return out;
}

}  // namespace framelift::models::ncnn
