#pragma once
// ONNX TensorProtos as contiguous CPU at::Tensors in the file's type (onnx_proto.h reads them).
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

#include "weights/onnx_proto.h"
#include "weights/state_dict.h"

namespace framelift::weights::onnx {

// libtorch's type for an ONNX element type; nullopt for those framelift cannot hold.
std::optional<c10::ScalarType> scalar_type(DataType type);

// Throws Error(Model) "<label>: tensor '<name>' ..." for types framelift cannot hold (string,
// unsigned 16/32/64-bit, complex, fp8) and for data stored in a field its type does not use.
// External data must have been read first (read_external_data).
at::Tensor to_tensor(const TensorProto& tensor, const std::string& label);

// The graph's initializers by name.
StateDict initializers(const Model& model);

}  // namespace framelift::weights::onnx
