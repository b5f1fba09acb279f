#include "weights/onnx_tensor.h"

#include <cstring>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>

#include "util/error.h"
#include "util/str.h"

namespace framelift::weights::onnx {
std::optional<c10::ScalarType> scalar_type(DataType type) {
  switch (type) {
    case DataType::Float: return at::kFloat;
    case DataType::Double: return at::kDouble;
    case DataType::Float16: return at::kHalf;
    case DataType::Bfloat16: return at::kBFloat16;
    case DataType::Int64: return at::kLong;
    case DataType::Int32: return at::kInt;
    case DataType::Int16: return at::kShort;
    case DataType::Int8: return at::kChar;
    case DataType::Uint8: return at::kByte;
    case DataType::Bool: return at::kBool;
    default: return std::nullopt;
  }
}

namespace {

// Typed fields hold one value per element, narrowed to the tensor's type (int32_data carries
// int8/16, uint8, bool and the bit patterns of fp16/bf16).
template <class Out, class In>
void narrow_into(const at::Tensor& out, const std::vector<In>& values) {
  auto* p = static_cast<Out*>(out.data_ptr());
  for (size_t k = 0; k < values.size(); ++k) p[k] = static_cast<Out>(values[k]);
}

}  // namespace

at::Tensor to_tensor(const TensorProto& t, const std::string& label) {
  auto fail = [&](const std::string& problem) -> at::Tensor {
    throw Error(ErrorKind::Model, str(label, ": tensor '", t.name, "' ", problem));
  };
  const auto type = scalar_type(t.data_type);
  if (!type) return fail(str("has unsupported type ", data_type_name(t.data_type), " (", t.raw_type, ")"));
  if (t.external) return fail("is stored externally and was not read");
  const int64_t n = t.numel();
  at::Tensor out = at::empty(t.dims, at::TensorOptions().dtype(*type));
  if (n == 0) return out;
  if (!t.raw_data.empty()) {
    // The reader checked raw_data is exactly n x element size.
    std::memcpy(out.data_ptr(), t.raw_data.data(), t.raw_data.size());
    if (*type == at::kBool) {
      auto* p = static_cast<uint8_t*>(out.data_ptr());
      for (int64_t i = 0; i < n; ++i) p[i] = p[i] != 0;
    }
    return out;
  }
  auto need = [&](size_t held, const char* field) {
    if (held != static_cast<size_t>(n)) fail(str("of type ", data_type_name(t.data_type), " has no data in ", field));
  };
  switch (t.data_type) {
    case DataType::Float: need(t.float_data.size(), "float_data"); narrow_into<float>(out, t.float_data); break;
    case DataType::Double: need(t.double_data.size(), "double_data"); narrow_into<double>(out, t.double_data); break;
    case DataType::Int64: need(t.int64_data.size(), "int64_data"); narrow_into<int64_t>(out, t.int64_data); break;
    case DataType::Int32: need(t.int32_data.size(), "int32_data"); narrow_into<int32_t>(out, t.int32_data); break;
    case DataType::Int16: need(t.int32_data.size(), "int32_data"); narrow_into<int16_t>(out, t.int32_data); break;
    case DataType::Int8: need(t.int32_data.size(), "int32_data"); narrow_into<int8_t>(out, t.int32_data); break;
    case DataType::Uint8: need(t.int32_data.size(), "int32_data"); narrow_into<uint8_t>(out, t.int32_data); break;
    case DataType::Bool: {
      need(t.int32_data.size(), "int32_data");
      auto* p = static_cast<bool*>(out.data_ptr());
      for (size_t k = 0; k < t.int32_data.size(); ++k) p[k] = t.int32_data[k] != 0;
      break;
    }
    case DataType::Float16: case DataType::Bfloat16:
      need(t.int32_data.size(), "int32_data");
      narrow_into<uint16_t>(out, t.int32_data);
      break;
    default: return fail("has no readable data");
  }
  return out;
}

StateDict initializers(const Model& model) {
  StateDict out;
  for (const auto& t : model.graph.initializers) {
    if (t.name.empty()) throw Error(ErrorKind::Model, str(model.source, ": an initializer has no name"));
    if (!out.emplace(t.name, to_tensor(t, model.source)).second)
      throw Error(ErrorKind::Model, str(model.source, ": two initializers are named '", t.name, "'"));
  }
  return out;
}

}  // namespace framelift::weights::onnx
