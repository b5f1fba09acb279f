#pragma once
// ONNX operator names (default domain) to op factories: one table, filled by the group files
// (builtin_ops.h). An operator not in it is refused at load by name, never guessed.
#include <optional>
#include <string>
#include <vector>

#include "models/onnx/onnx_op.h"

namespace framelift::models::onnx {

std::optional<OpFactory> find_op(const std::string& op_type);
std::vector<std::string> supported_ops();

}  // namespace framelift::models::onnx
