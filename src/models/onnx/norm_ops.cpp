// Softmax, the normalisations and the reductions (ReduceMean/Pow/Sqrt is how exporters before
// opset 17 write LayerNorm; it runs as those ops).
#include <algorithm>

#include <ATen/ATen.h>

#include "infer/fp32_islands.h"
#include "models/onnx/builtin_ops.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models::onnx {
namespace {

// Before opset 13 Softmax flattens the input to 2-D at `axis` (default 1); from 13 it is one axis
// (default -1). Both agree when axis is the last.
std::unique_ptr<OnnxOp> softmax(const NodeSpec& spec, bool log) {
  const bool legacy = spec.opset < 13;
  const int64_t axis = spec.i("axis", legacy ? 1 : -1);
  return lambda_op([legacy, axis, log](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "Softmax");
    const int64_t a = normalize_axis(axis, x.dim(), "Softmax");
    auto fn = [log](const at::Tensor& t, int64_t d) { return log ? at::log_softmax(t, d) : at::softmax(t, d); };
    if (!legacy || a == x.dim() - 1) return Tensors{fn(x, a)};
    int64_t outer = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.size(d);
    return Tensors{fn(x.reshape({outer, -1}), 1).reshape(x.sizes())};
  });
}

std::unique_ptr<OnnxOp> layer_norm(const NodeSpec& spec) {
  const int64_t axis = spec.i("axis", -1);
  const double eps = spec.f("epsilon", 1e-5f);
  if (spec.node.outputs.size() > 1) spec.fail("the Mean and InvStdDev outputs are not supported");
  return lambda_op([axis, eps](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "LayerNormalization");
    const int64_t a = normalize_axis(axis, x.dim(), "LayerNormalization");
    const std::vector<int64_t> shape(x.sizes().begin() + a, x.sizes().end());
    at::Tensor scale = input(in, 1, "LayerNormalization").expand(shape);
    at::Tensor bias = in.size() > 2 && in[2].defined() ? in[2].expand(shape) : at::Tensor();
    if (a == x.dim() - 1) return Tensors{infer::layer_norm(x, shape, scale.contiguous(), bias.defined() ? bias.contiguous() : bias, eps)};
    return Tensors{at::layer_norm(x, shape, scale.contiguous(), bias.defined() ? bias.contiguous() : bias, eps)};
  });
}

std::unique_ptr<OnnxOp> instance_norm(const NodeSpec& spec) {
  const double eps = spec.f("epsilon", 1e-5f);
  return lambda_op([eps](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "InstanceNormalization");
    return Tensors{at::instance_norm(x, input(in, 1, "InstanceNormalization"), input(in, 2, "InstanceNormalization"), {}, {},
                                     true, 0.0, eps, false)};
  });
}

std::unique_ptr<OnnxOp> batch_norm(const NodeSpec& spec) {
  const double eps = spec.f("epsilon", 1e-5f);
  if (spec.i("training_mode", 0) != 0) spec.fail("training_mode=1 is not supported");
  if (spec.node.outputs.size() > 1) spec.fail("the running-statistics outputs are not supported");
  return lambda_op([eps](const Tensors& in, const RunContext&) {
    const char* op = "BatchNormalization";
    return Tensors{at::batch_norm(input(in, 0, op), input(in, 1, op), input(in, 2, op), input(in, 3, op), input(in, 4, op), false,
                                  0.0, eps, false)};
  });
}

enum class Reduce { Mean, Sum, Max, Min };

// Axes from the attribute (ReduceSum from opset 13, the others from 18: the second input).
std::unique_ptr<OnnxOp> reduce(const NodeSpec& spec, Reduce kind) {
  const std::vector<int64_t> attr = spec.ints("axes");
  const bool keep = spec.i("keepdims", 1) != 0;
  const bool noop_empty = spec.i("noop_with_empty_axes", 0) != 0;
  return lambda_op([=](const Tensors& in, const RunContext& context) {
    const at::Tensor& x = input(in, 0, "Reduce");
    std::vector<int64_t> axes = in.size() > 1 && in[1].defined() ? int_values(in[1]) : attr;
    if (axes.empty()) {
      if (noop_empty) return Tensors{x};
      for (int64_t d = 0; d < x.dim(); ++d) axes.push_back(d);
    }
    for (auto& a : axes) a = normalize_axis(a, x.dim(), "Reduce");
    const bool over_h = std::find(axes.begin(), axes.end(), 2) != axes.end(), over_w = std::find(axes.begin(), axes.end(), 3) != axes.end();
    if (context.whole_picture && x.dim() == 4 && over_h && over_w) *context.whole_picture = true;
    switch (kind) {
      case Reduce::Mean: return Tensors{x.mean(axes, keep)};
      case Reduce::Sum: return Tensors{x.sum(axes, keep)};
      case Reduce::Max: return Tensors{x.amax(axes, keep)};
      case Reduce::Min: return Tensors{x.amin(axes, keep)};
    }
    return Tensors{};
  });
}

}  // namespace

void add_norm_ops(OpTable& t) {
  t["Softmax"] = [](const NodeSpec& spec) { return softmax(spec, false); };
  t["LogSoftmax"] = [](const NodeSpec& spec) { return softmax(spec, true); };
  t["LayerNormalization"] = layer_norm;
  t["InstanceNormalization"] = instance_norm;
  t["BatchNormalization"] = batch_norm;
  t["ReduceMean"] = [](const NodeSpec& spec) { return reduce(spec, Reduce::Mean); };
  t["ReduceSum"] = [](const NodeSpec& spec) { return reduce(spec, Reduce::Sum); };
  t["ReduceMax"] = [](const NodeSpec& spec) { return reduce(spec, Reduce::Max); };
  t["ReduceMin"] = [](const NodeSpec& spec) { return reduce(spec, Reduce::Min); };
}

}  // namespace framelift::models::onnx
