// Layout and shape operators: Concat, Split, Slice, Reshape, Transpose, Flatten, Squeeze,
// Unsqueeze, Shape, Gather, Expand, Tile, ConstantOfShape, Range, Constant. The shape arithmetic
// of dynamic exports (Shape -> Gather -> Concat -> Reshape) runs on small CPU int64 tensors.
#include <limits>

#include <ATen/ATen.h>

#include "models/onnx/builtin_ops.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/onnx_tensor.h"

namespace framelift::models::onnx {
namespace {

at::Tensor as_long_cpu(const std::vector<int64_t>& v) {
  return at::tensor(v, at::TensorOptions().dtype(at::kLong));
}

std::unique_ptr<OnnxOp> concat(const NodeSpec& spec) {
  if (!spec.has("axis")) spec.fail("has no axis");
  const int64_t axis = spec.i("axis", 0);
  return lambda_op([axis](const Tensors& in, const RunContext&) {
    std::vector<at::Tensor> parts;
    for (const auto& t : in)
      if (t.defined()) parts.push_back(t);
    if (parts.empty()) throw Error(ErrorKind::Model, "Concat: no inputs");
    // Shape tensors mix CPU constants with computed ones; images are on one device already.
    const auto device = parts[0].device();
    for (auto& p : parts) p = p.to(device);
    return Tensors{at::cat(parts, normalize_axis(axis, parts[0].dim(), "Concat"))};
  });
}

std::unique_ptr<OnnxOp> split(const NodeSpec& spec) {
  const int64_t axis = spec.i("axis", 0);
  const std::vector<int64_t> attr_split = spec.ints("split");
  const size_t outputs = spec.node.outputs.size();
  const int64_t num_outputs = spec.i("num_outputs", static_cast<int64_t>(outputs));
  return lambda_op([=](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "Split");
    const int64_t a = normalize_axis(axis, x.dim(), "Split");
    std::vector<int64_t> sizes = attr_split;
    if (in.size() > 1 && in[1].defined()) sizes = int_values(in[1]);
    if (sizes.empty()) {
      // Equal parts, the last smaller (opset 18's num_outputs rule, also the older equal split).
      const int64_t n = std::max<int64_t>(num_outputs, 1), len = x.size(a), part = (len + n - 1) / n;
      for (int64_t k = 0, left = len; k < n; ++k, left -= part) sizes.push_back(std::min(part, std::max<int64_t>(left, 0)));
    }
    Tensors out;
    int64_t start = 0;
    for (int64_t s : sizes) {
      out.push_back(x.narrow(a, start, s));
      start += s;
    }
    if (start != x.size(a)) throw Error(ErrorKind::Model, str("Split: parts sum to ", start, ", the axis has ", x.size(a)));
    return out;
  });
}

// ONNX Slice clamps starts/ends like Python slicing and allows negative steps.
at::Tensor slice_axis(const at::Tensor& x, int64_t axis, int64_t start, int64_t end, int64_t step) {
  const int64_t len = x.size(axis);
  if (step == 0) throw Error(ErrorKind::Model, "Slice: step 0");
  auto clampi = [](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(v, hi)); };
  if (start < 0) start += len;
  if (end < 0 && end > std::numeric_limits<int64_t>::min() / 2) end += len;
  if (step > 0) {
    start = clampi(start, 0, len);
    end = clampi(end, 0, len);
    if (end <= start) return x.narrow(axis, 0, 0);
    return x.slice(axis, start, end, step);
  }
  start = clampi(start, 0, len - 1);
  end = clampi(end, -1, len - 1);
  if (start <= end) return x.narrow(axis, 0, 0);
  // Walk forwards over the same elements, then reverse.
  const int64_t count = (start - end + (-step) - 1) / (-step);
  const int64_t first = start - (count - 1) * (-step);
  return x.slice(axis, first, start + 1, -step).flip({axis});
}

std::unique_ptr<OnnxOp> slice(const NodeSpec&) {
  return lambda_op([](const Tensors& in, const RunContext&) {
    at::Tensor x = input(in, 0, "Slice");
    const auto starts = int_values(input(in, 1, "Slice")), ends = int_values(input(in, 2, "Slice"));
    std::vector<int64_t> axes, steps;
    if (in.size() > 3 && in[3].defined()) axes = int_values(in[3]);
    if (in.size() > 4 && in[4].defined()) steps = int_values(in[4]);
    if (axes.empty())
      for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      throw Error(ErrorKind::Model, "Slice: starts, ends, axes and steps differ in length");
    for (size_t k = 0; k < starts.size(); ++k)
      x = slice_axis(x, normalize_axis(axes[k], x.dim(), "Slice"), starts[k], ends[k], steps[k]);
    return Tensors{x};
  });
}

std::unique_ptr<OnnxOp> reshape(const NodeSpec& spec) {
  const bool allow_zero = spec.i("allowzero", 0) != 0;
  return lambda_op([allow_zero](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "Reshape");
    std::vector<int64_t> shape = int_values(input(in, 1, "Reshape"));
    for (size_t k = 0; k < shape.size(); ++k)
      if (shape[k] == 0 && !allow_zero) {
        if (static_cast<int64_t>(k) >= x.dim()) throw Error(ErrorKind::Model, "Reshape: 0 copies a dimension the input lacks");
        shape[k] = x.size(static_cast<int64_t>(k));
      }
    return Tensors{x.reshape(shape)};
  });
}

std::unique_ptr<OnnxOp> transpose(const NodeSpec& spec) {
  const std::vector<int64_t> perm = spec.ints("perm");
  return lambda_op([perm](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "Transpose");
    std::vector<int64_t> p = perm;
    if (p.empty())
      for (int64_t d = x.dim(); d-- > 0;) p.push_back(d);
    return Tensors{x.permute(p)};
  });
}

std::unique_ptr<OnnxOp> flatten(const NodeSpec& spec) {
  const int64_t axis = spec.i("axis", 1);
  return lambda_op([axis](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "Flatten");
    const int64_t a = axis < 0 ? axis + x.dim() : axis;
    int64_t outer = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.size(d);
    return Tensors{x.reshape({outer, -1})};
  });
}

// Squeeze/Unsqueeze: axes from the attribute (opset < 13) or the second input.
std::vector<int64_t> axes_of(const Tensors& in, const std::vector<int64_t>& attr) {
  if (in.size() > 1 && in[1].defined()) return int_values(in[1]);
  return attr;
}

std::unique_ptr<OnnxOp> squeeze(const NodeSpec& spec) {
  const auto attr = spec.ints("axes");
  return lambda_op([attr](const Tensors& in, const RunContext&) {
    at::Tensor x = input(in, 0, "Squeeze");
    std::vector<int64_t> axes = axes_of(in, attr);
    if (axes.empty()) return Tensors{x.squeeze()};
    for (auto& a : axes) a = normalize_axis(a, x.dim(), "Squeeze");
    std::sort(axes.rbegin(), axes.rend());
    for (int64_t a : axes) x = x.squeeze(a);
    return Tensors{x};
  });
}

std::unique_ptr<OnnxOp> unsqueeze(const NodeSpec& spec) {
  const auto attr = spec.ints("axes");
  return lambda_op([attr](const Tensors& in, const RunContext&) {
    at::Tensor x = input(in, 0, "Unsqueeze");
    std::vector<int64_t> axes = axes_of(in, attr);
    const int64_t rank = x.dim() + static_cast<int64_t>(axes.size());
    for (auto& a : axes) a = normalize_axis(a, rank, "Unsqueeze");
    std::sort(axes.begin(), axes.end());
    for (int64_t a : axes) x = x.unsqueeze(a);
    return Tensors{x};
  });
}

std::unique_ptr<OnnxOp> shape(const NodeSpec& spec) {
  const int64_t start = spec.i("start", 0);
  const std::optional<int64_t> end = spec.has("end") ? std::optional<int64_t>(spec.i("end", 0)) : std::nullopt;
  return lambda_op([start, end](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "Shape");
    const int64_t rank = x.dim();
    auto clampi = [rank](int64_t v) { return std::max<int64_t>(0, std::min(v < 0 ? v + rank : v, rank)); };
    const int64_t b = clampi(start), e = end ? clampi(*end) : rank;
    std::vector<int64_t> dims;
    for (int64_t d = b; d < e; ++d) dims.push_back(x.size(d));
    return Tensors{as_long_cpu(dims)};
  });
}

std::unique_ptr<OnnxOp> gather(const NodeSpec& spec) {
  const int64_t axis = spec.i("axis", 0);
  return lambda_op([axis](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "Gather");
    const int64_t a = normalize_axis(axis, x.dim(), "Gather");
    at::Tensor idx = input(in, 1, "Gather").to(x.device()).to(at::kLong);
    idx = at::where(idx < 0, idx + x.size(a), idx);
    // Output shape: x.shape[:a] + idx.shape + x.shape[a+1:].
    at::Tensor flat = x.index_select(a, idx.flatten());
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + a);
    for (int64_t s : idx.sizes()) shape.push_back(s);
    for (int64_t d = a + 1; d < x.dim(); ++d) shape.push_back(x.size(d));
    return Tensors{flat.reshape(shape)};
  });
}

// ONNX Expand broadcasts both ways: a 1 in the shape keeps the input's size.
std::unique_ptr<OnnxOp> expand(const NodeSpec&) {
  return lambda_op([](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "Expand");
    const std::vector<int64_t> shape = int_values(input(in, 1, "Expand"));
    const int64_t rank = std::max<int64_t>(x.dim(), static_cast<int64_t>(shape.size()));
    std::vector<int64_t> out(static_cast<size_t>(rank));
    for (int64_t k = 0; k < rank; ++k) {
      const int64_t xi = k - (rank - x.dim()), si = k - (rank - static_cast<int64_t>(shape.size()));
      const int64_t a = xi >= 0 ? x.size(xi) : 1, b = si >= 0 ? shape[static_cast<size_t>(si)] : 1;
      if (a != b && a != 1 && b != 1) throw Error(ErrorKind::Model, str("Expand: cannot broadcast ", a, " to ", b));
      out[static_cast<size_t>(k)] = a == 1 ? b : a;
    }
    return Tensors{x.expand(out).contiguous()};
  });
}

std::unique_ptr<OnnxOp> tile(const NodeSpec&) {
  return lambda_op([](const Tensors& in, const RunContext&) {
    return Tensors{input(in, 0, "Tile").repeat(int_values(input(in, 1, "Tile")))};
  });
}

std::unique_ptr<OnnxOp> constant_of_shape(const NodeSpec& spec) {
  at::Tensor value = at::zeros({1});
  if (const auto* a = spec.node.find("value"); a && a->t) value = weights::onnx::to_tensor(*a->t, spec.source).flatten();
  if (value.numel() != 1) spec.fail("value must hold one element");
  return lambda_op([value](const Tensors& in, const RunContext& context) {
    // A float fill is in the run's precision, like every other float value of the graph.
    const at::Tensor v = at::isFloatingType(value.scalar_type()) ? value.to(context.float_type) : value;
    return Tensors{v.expand(int_values(input(in, 0, "ConstantOfShape"))).contiguous()};
  });
}

std::unique_ptr<OnnxOp> range(const NodeSpec&) {
  return lambda_op([](const Tensors& in, const RunContext& context) {
    const at::Tensor& start = input(in, 0, "Range");
    // Computed in the parameters' fp32 (bf16 steps would drift), then in the run's precision.
    at::Tensor r = at::arange(start.item(), input(in, 1, "Range").item(), input(in, 2, "Range").item(), start.options());
    return Tensors{at::isFloatingType(r.scalar_type()) ? r.to(context.float_type) : r};
  });
}

at::Tensor constant_value(const NodeSpec& spec) {
  const auto* a = spec.node.attributes.empty() ? nullptr : &spec.node.attributes[0];
  if (!a || spec.node.attributes.size() != 1) spec.fail("needs exactly one value attribute");
  if (a->name == "value" && a->t) return weights::onnx::to_tensor(*a->t, spec.source);
  if (a->name == "value_float") return at::tensor(a->f);
  if (a->name == "value_int") return at::tensor(a->i, at::kLong);
  if (a->name == "value_floats") return at::tensor(a->floats);
  if (a->name == "value_ints") return at::tensor(a->ints, at::kLong);
  spec.fail(str("value attribute ", a->name, " is not supported"));
}

std::unique_ptr<OnnxOp> constant(const NodeSpec& spec) {
  const at::Tensor value = constant_value(spec);
  return lambda_op([value](const Tensors&, const RunContext&) { return Tensors{value}; });
}

}  // namespace

void add_shape_ops(OpTable& t) {
  t["Concat"] = concat;
  t["Split"] = split;
  t["Slice"] = slice;
  t["Reshape"] = reshape;
  t["Transpose"] = transpose;
  t["Flatten"] = flatten;
  t["Squeeze"] = squeeze;
  t["Unsqueeze"] = unsqueeze;
  t["Shape"] = shape;
  t["Gather"] = gather;
  t["Expand"] = expand;
  t["Tile"] = tile;
  t["ConstantOfShape"] = constant_of_shape;
  t["Range"] = range;
  t["Constant"] = constant;
}

}  // namespace framelift::models::onnx
