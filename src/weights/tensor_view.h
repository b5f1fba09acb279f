#pragma once
// Turns a pickled tensor reference plus its storage bytes into a contiguous CPU tensor that owns
// its memory, after checking that sizes, strides and offset stay inside the storage.
#include <cstdint>
#include <span>
#include <string>

#include <ATen/core/Tensor.h>

#include "weights/dtype.h"
#include "weights/pickle_value.h"

namespace framelift::weights {

// A storage's raw bytes copied into an aligned 1-D tensor of `dtype` (bytes.size() must be a
// multiple of the element size).
at::Tensor storage_tensor(std::span<const uint8_t> bytes, Dtype dtype, const std::string& label);

// `storage` is storage_tensor(...) for tensor.storage.key; throws Error(Model) "<label>: ..." when
// the view does not fit.
at::Tensor materialize(const pickle::TensorRef& tensor, const at::Tensor& storage,
                       const std::string& name, const std::string& label);

}  // namespace framelift::weights
