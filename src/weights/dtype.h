#pragma once
// Element types the weight files can hold. Kept free of libtorch so that the byte-level parsers
// (unpickler, safetensors header) can be fuzzed and reasoned about without it; dtype_torch.h maps
// them to at::ScalarType.
#include <cstddef>
#include <optional>
#include <string_view>

namespace framelift::weights {

enum class Dtype { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };

size_t element_size(Dtype dtype);
// The safetensors spelling ("F32", "BF16", "BOOL", ...).
std::string_view safetensors_name(Dtype dtype);
std::optional<Dtype> dtype_from_safetensors_name(std::string_view name);
// PyTorch's legacy storage class names ("FloatStorage", "BFloat16Storage", ...).
std::optional<Dtype> dtype_from_storage_name(std::string_view name);

}  // namespace framelift::weights
