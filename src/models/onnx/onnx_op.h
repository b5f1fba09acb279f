#pragma once
// One executable ONNX node. Values are at::Tensors in ONNX's own layout (an image is
// [N, C, H, W]); integer tensors that describe shapes stay on the CPU. Ops read every input,
// weights included, from the value table: initializers are values like any other, converted once
// by OnnxModel::to(), so an op holds no tensors of its own.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "weights/onnx_proto.h"

namespace framelift::models::onnx {

using Tensors = std::vector<at::Tensor>;

// What a run computes in: Cast to a float type means this type (bf16/fp16 runs stay in it).
struct RunContext {
  c10::ScalarType float_type = at::kFloat;
  // Set by ops that take statistics over a whole 4-D picture (a mean over H and W): the probe
  // run reads it to mark the graph untiled, since a tile would see only its own.
  bool* whole_picture = nullptr;
};

class OnnxOp {
 public:
  virtual ~OnnxOp() = default;
  // Omitted optional inputs are undefined tensors.
  virtual Tensors run(const Tensors& inputs, const RunContext& context) = 0;
};

// What a factory gets to build an op: the node, the model's opset, and its inputs' values where
// they are known at load (initializers, Constants, folded nodes; undefined otherwise).
struct NodeSpec {
  const weights::onnx::Node& node;
  int64_t opset = 0;
  const std::string& source;  // the .onnx file, for messages
  std::vector<at::Tensor> constants;

  bool has(const std::string& attribute) const { return node.find(attribute) != nullptr; }
  int64_t i(const std::string& attribute, int64_t fallback) const;
  float f(const std::string& attribute, float fallback) const;
  std::string s(const std::string& attribute, const std::string& fallback) const;
  std::vector<int64_t> ints(const std::string& attribute, std::vector<int64_t> fallback = {}) const;
  // The attribute's value is one of `allowed`, else the node is refused naming it.
  std::string choice(const std::string& attribute, const std::string& fallback, const std::vector<std::string>& allowed) const;
  // A constant input, or nullopt.
  std::optional<at::Tensor> constant(size_t input) const;
  // Throws Error(Model) "<source>: node <name> (<op>): <problem>".
  [[noreturn]] void fail(const std::string& problem) const;
};

using OpFactory = std::function<std::unique_ptr<OnnxOp>(const NodeSpec&)>;
using RunFn = std::function<Tensors(const Tensors&, const RunContext&)>;

// A stateless op from a lambda: most ONNX operators are one ATen call.
class LambdaOp : public OnnxOp {
 public:
  explicit LambdaOp(RunFn fn) : fn_(std::move(fn)) {}
  Tensors run(const Tensors& inputs, const RunContext& context) override { return fn_(inputs, context); }

 private:
  RunFn fn_;
};
inline std::unique_ptr<OnnxOp> lambda_op(RunFn fn) { return std::make_unique<LambdaOp>(std::move(fn)); }

// Values of a small integer tensor (shapes, axes, pads), read on the CPU.
std::vector<int64_t> int_values(const at::Tensor& t);
// An axis in [-rank, rank) as a non-negative index; throws Error(Model) otherwise.
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what);
// Input k, or throws naming the op when it is missing.
const at::Tensor& input(const Tensors& inputs, size_t k, const char* op);

}  // namespace framelift::models::onnx
