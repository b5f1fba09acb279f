#pragma once
// Maps ncnn layer type names to op factories. The built-in layers are always present; custom
// layers (ncnn's "rife.Warp" and the like, which an ncnn app registers in C++) are added at startup:
//
//   framelift::models::ncnn::register_layer("rife.Warp", [](const LayerSpec& spec) {
//     return std::make_unique<WarpOp>(spec);
//   });
//
// Registered types must store no weights in the .bin: the reader cannot know their layout.
#include <optional>
#include <set>
#include <string>

#include "models/ncnn/ncnn_op.h"

namespace framelift::models::ncnn {

// Thread-safe; a later registration of the same type replaces the earlier one.
void register_layer(const std::string& type, LayerFactory factory);

// The factory for a type, built-in or registered; nullopt when unknown.
std::optional<LayerFactory> find_layer(const std::string& type);

// Registered custom types (built-ins excluded), for the .bin reader.
std::set<std::string> custom_layer_types();

}  // namespace framelift::models::ncnn
