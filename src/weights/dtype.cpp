#include "weights/dtype.h"

#include <array>

namespace framelift::weights {
namespace {

struct DtypeInfo {
  Dtype dtype;
  size_t size;
  std::string_view safetensors;
  std::string_view storage;
};

constexpr std::array<DtypeInfo, 10> kDtypes{{
    {Dtype::F64, 8, "F64", "DoubleStorage"},
    {Dtype::F32, 4, "F32", "FloatStorage"},
    {Dtype::F16, 2, "F16", "HalfStorage"},
    {Dtype::BF16, 2, "BF16", "BFloat16Storage"},
    {Dtype::I64, 8, "I64", "LongStorage"},
    {Dtype::I32, 4, "I32", "IntStorage"},
    {Dtype::I16, 2, "I16", "ShortStorage"},
    {Dtype::I8, 1, "I8", "CharStorage"},
    {Dtype::U8, 1, "U8", "ByteStorage"},
    {Dtype::Bool, 1, "BOOL", "BoolStorage"},
}};

const DtypeInfo& info(Dtype dtype) {
  for (const auto& entry : kDtypes)
    if (entry.dtype == dtype) return entry;
  return kDtypes[0];  // unreachable: every enumerator is in the table
}

}  // namespace

size_t element_size(Dtype dtype) { return info(dtype).size; }

std::string_view safetensors_name(Dtype dtype) { return info(dtype).safetensors; }

std::optional<Dtype> dtype_from_safetensors_name(std::string_view name) {
  for (const auto& entry : kDtypes)
    if (entry.safetensors == name) return entry.dtype;
  return std::nullopt;
}

std::optional<Dtype> dtype_from_storage_name(std::string_view name) {
  for (const auto& entry : kDtypes)
    if (entry.storage == name) return entry.dtype;
  return std::nullopt;
}

}  // namespace framelift::weights
