#include "models/onnx/op_registry.h"

#include <ATen/ATen.h>

#include "models/onnx/builtin_ops.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models::onnx {
namespace {

// Filled by explicit calls: a static library's unreferenced registrar objects would be dropped.
const OpTable& table() {
  static const OpTable t = [] {
    OpTable ops;
    add_conv_ops(ops);
    add_elementwise_ops(ops);
    add_shape_ops(ops);
    add_resample_ops(ops);
    add_norm_ops(ops);
    return ops;
  }();
  return t;
}

const weights::onnx::Attribute* typed(const NodeSpec& spec, const std::string& name, weights::onnx::AttributeType type) {
  const auto* a = spec.node.find(name);
  if (a && a->type != type && a->type != weights::onnx::AttributeType::Undefined)
    spec.fail(str("attribute ", name, " is ", weights::onnx::attribute_type_name(a->type), ", expected ",
                  weights::onnx::attribute_type_name(type)));
  return a;
}

}  // namespace

std::optional<OpFactory> find_op(const std::string& op_type) {
  auto it = table().find(op_type);
  if (it == table().end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> out;
  for (const auto& [name, factory] : table()) out.push_back(name);
  return out;
}

int64_t NodeSpec::i(const std::string& name, int64_t fallback) const {
  const auto* a = typed(*this, name, weights::onnx::AttributeType::Int);
  return a ? a->i : fallback;
}
float NodeSpec::f(const std::string& name, float fallback) const {
  const auto* a = typed(*this, name, weights::onnx::AttributeType::Float);
  return a ? a->f : fallback;
}
std::string NodeSpec::s(const std::string& name, const std::string& fallback) const {
  const auto* a = typed(*this, name, weights::onnx::AttributeType::String);
  return a ? a->s : fallback;
}
std::vector<int64_t> NodeSpec::ints(const std::string& name, std::vector<int64_t> fallback) const {
  const auto* a = typed(*this, name, weights::onnx::AttributeType::Ints);
  return a ? a->ints : fallback;
}
std::string NodeSpec::choice(const std::string& name, const std::string& fallback, const std::vector<std::string>& allowed) const {
  std::string v = s(name, fallback);
  for (const auto& a : allowed)
    if (v == a) return v;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  fail(str(name, "='", v, "' is not supported (", list, ")"));
}
std::optional<at::Tensor> NodeSpec::constant(size_t k) const {
  if (k < constants.size() && constants[k].defined()) return constants[k];
  return std::nullopt;
}
void NodeSpec::fail(const std::string& problem) const {
  throw Error(ErrorKind::Model, str(source, ": node ", node.name.empty() ? "(unnamed)" : node.name, " (", node.op_type, "): ", problem));
}

std::vector<int64_t> int_values(const at::Tensor& t) {
  at::Tensor c = t.to(at::kCPU).to(at::kLong).contiguous().flatten();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    throw Error(ErrorKind::Model, str(what, ": axis ", axis, " is outside a rank-", rank, " tensor"));
  return axis < 0 ? axis + rank : axis;
}

const at::Tensor& input(const Tensors& inputs, size_t k, const char* op) {
  if (k >= inputs.size() || !inputs[k].defined())
    throw Error(ErrorKind::Model, str(op, ": input ", k, " is missing"));
  return inputs[k];
}

}  // namespace framelift::models::onnx
