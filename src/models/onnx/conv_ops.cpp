// Conv, ConvTranspose, Gemm, MatMul and pooling.
#include <ATen/ATen.h>

#include "infer/fp32_islands.h"
#include "models/onnx/builtin_ops.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models::onnx {
namespace {

struct Window {
  std::vector<int64_t> strides, dilations, pads;  // pads: ONNX order, all begins then all ends
  std::string auto_pad;
};

Window read_window(const NodeSpec& spec) {
  Window w;
  w.strides = spec.ints("strides");
  w.dilations = spec.ints("dilations");
  w.pads = spec.ints("pads");
  w.auto_pad = spec.choice("auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"});
  if (w.auto_pad != "NOTSET" && !w.pads.empty() && w.auto_pad != "VALID") w.pads.clear();
  return w;
}

std::vector<int64_t> or_ones(std::vector<int64_t> v, size_t n) {
  if (v.empty()) v.assign(n, 1);
  return v;
}

// pads for input spatial sizes `in` and kernel extents, honouring auto_pad.
std::vector<int64_t> resolve_pads(const Window& w, at::IntArrayRef in, at::IntArrayRef kernel, const char* op) {
  const size_t n = kernel.size();
  const auto strides = or_ones(w.strides, n), dilations = or_ones(w.dilations, n);
  if (strides.size() != n || dilations.size() != n)
    throw Error(ErrorKind::Model, str(op, ": strides/dilations do not match a ", n, "-D kernel"));
  std::vector<int64_t> pads(2 * n, 0);
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
    for (size_t k = 0; k < n; ++k) {
      const int64_t out = (in[k] + strides[k] - 1) / strides[k];
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[k] + (kernel[k] - 1) * dilations[k] + 1 - in[k]);
      const int64_t small = total / 2;
      pads[k] = w.auto_pad == "SAME_UPPER" ? small : total - small;
      pads[k + n] = total - pads[k];
    }
  } else if (w.auto_pad == "NOTSET" && !w.pads.empty()) {
    if (w.pads.size() != 2 * n) throw Error(ErrorKind::Model, str(op, ": pads has ", w.pads.size(), " values for a ", n, "-D kernel"));
    pads = w.pads;
  }
  return pads;
}

bool symmetric(const std::vector<int64_t>& pads) {
  const size_t n = pads.size() / 2;
  for (size_t k = 0; k < n; ++k)
    if (pads[k] != pads[k + n]) return false;
  return true;
}

// ONNX begin/end pads as constant_pad_nd's list (last axis first).
std::vector<int64_t> torch_pad_order(const std::vector<int64_t>& pads) {
  const size_t n = pads.size() / 2;
  std::vector<int64_t> out;
  for (size_t k = n; k-- > 0;) {
    out.push_back(pads[k]);
    out.push_back(pads[k + n]);
  }
  return out;
}

std::unique_ptr<OnnxOp> conv(const NodeSpec& spec) {
  const Window w = read_window(spec);
  const int64_t groups = spec.i("group", 1);
  if (groups < 1) spec.fail(str("group ", groups, " is not positive"));
  if (auto weight = spec.constant(1); weight && (weight->dim() < 3 || weight->dim() > 5))
    spec.fail(str("a ", weight->dim() - 2, "-D convolution is not supported"));
  return lambda_op([w, groups](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "Conv");
    const at::Tensor& weight = input(in, 1, "Conv");
    const at::Tensor bias = in.size() > 2 ? in[2] : at::Tensor();
    const size_t n = static_cast<size_t>(weight.dim() - 2);
    if (x.dim() != weight.dim()) throw Error(ErrorKind::Model, str("Conv: input rank ", x.dim(), " for a ", n, "-D kernel"));
    std::vector<int64_t> pads = resolve_pads(w, x.sizes().slice(2), weight.sizes().slice(2), "Conv");
    at::Tensor src = x;
    std::vector<int64_t> padding(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(n));
    if (!symmetric(pads)) {
      src = at::constant_pad_nd(x, torch_pad_order(pads), 0);
      padding.assign(n, 0);
    }
    return Tensors{at::convolution(src, weight, bias, or_ones(w.strides, n), padding, or_ones(w.dilations, n), false,
                                   std::vector<int64_t>(n, 0), groups)};
  });
}

// ConvTranspose's begin/end crops: `pads` as given, or, with `output_shape` or a SAME auto_pad
// (output = input * stride), the total the target size leaves, split as the ONNX spec says:
// SAME_UPPER puts the odd pixel at the end, everything else at the beginning.
std::vector<int64_t> transpose_pads(const Window& w, const std::vector<int64_t>& output_shape, at::IntArrayRef in,
                                    at::IntArrayRef kernel, const std::vector<int64_t>& out_pad) {
  const size_t n = kernel.size();
  const auto strides = or_ones(w.strides, n), dilations = or_ones(w.dilations, n);
  const bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
  if (output_shape.empty() && !same) {
    std::vector<int64_t> pads = w.pads.empty() || w.auto_pad == "VALID" ? std::vector<int64_t>(2 * n, 0) : w.pads;
    if (pads.size() != 2 * n) throw Error(ErrorKind::Model, str("ConvTranspose: pads has ", pads.size(), " values"));
    return pads;
  }
  if (!output_shape.empty() && output_shape.size() != n && output_shape.size() != n + 2)
    throw Error(ErrorKind::Model, str("ConvTranspose: output_shape has ", output_shape.size(), " values for a ", n, "-D kernel"));
  std::vector<int64_t> pads(2 * n, 0);
  for (size_t k = 0; k < n; ++k) {
    const int64_t target = output_shape.empty() ? in[k] * strides[k] : output_shape[output_shape.size() - n + k];
    const int64_t full = strides[k] * (in[k] - 1) + out_pad[k] + (kernel[k] - 1) * dilations[k] + 1;
    const int64_t total = full - target;
    if (total < 0)
      throw Error(ErrorKind::Model, str("ConvTranspose: output size ", target, " is larger than the ", full, " the convolution gives"));
    pads[k] = w.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    pads[k + n] = total - pads[k];
  }
  return pads;
}

std::unique_ptr<OnnxOp> conv_transpose(const NodeSpec& spec) {
  const Window w = read_window(spec);
  const std::vector<int64_t> output_shape = spec.ints("output_shape");
  const std::vector<int64_t> output_padding = spec.ints("output_padding");
  const int64_t groups = spec.i("group", 1);
  if (groups < 1) spec.fail(str("group ", groups, " is not positive"));
  return lambda_op([w, output_shape, output_padding, groups](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "ConvTranspose");
    const at::Tensor& weight = input(in, 1, "ConvTranspose");
    const at::Tensor bias = in.size() > 2 ? in[2] : at::Tensor();
    const size_t n = static_cast<size_t>(weight.dim() - 2);
    if (x.dim() != weight.dim()) throw Error(ErrorKind::Model, str("ConvTranspose: input rank ", x.dim(), " for a ", n, "-D kernel"));
    const auto strides = or_ones(w.strides, n), dilations = or_ones(w.dilations, n);
    const auto out_pad = output_padding.empty() ? std::vector<int64_t>(n, 0) : output_padding;
    if (out_pad.size() != n) throw Error(ErrorKind::Model, str("ConvTranspose: output_padding has ", out_pad.size(), " values"));
    const std::vector<int64_t> pads = transpose_pads(w, output_shape, x.sizes().slice(2), weight.sizes().slice(2), out_pad);
    const bool sym = symmetric(pads);
    std::vector<int64_t> padding(n, 0);
    if (sym) padding.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(n));
    at::Tensor y = n == 2 ? infer::conv_transpose2d(x, weight, bias, strides, padding, out_pad, groups, dilations)
                          : at::convolution(x, weight, bias, strides, padding, dilations, true, out_pad, groups);
    if (!sym)
      for (size_t k = 0; k < n; ++k) {
        const int64_t axis = static_cast<int64_t>(k) + 2;
        y = y.slice(axis, pads[k], y.size(axis) - pads[k + n]);
      }
    return Tensors{y};
  });
}

std::unique_ptr<OnnxOp> gemm(const NodeSpec& spec) {
  const float alpha = spec.f("alpha", 1.f), beta = spec.f("beta", 1.f);
  const bool trans_a = spec.i("transA", 0) != 0, trans_b = spec.i("transB", 0) != 0;
  return lambda_op([=](const Tensors& in, const RunContext&) {
    at::Tensor a = input(in, 0, "Gemm"), b = input(in, 1, "Gemm");
    if (trans_a) a = a.t();
    if (trans_b) b = b.t();
    at::Tensor y = at::matmul(a, b);
    if (alpha != 1.f) y = y * alpha;
    if (in.size() > 2 && in[2].defined()) y = y + (beta != 1.f ? in[2] * beta : in[2]);
    return Tensors{y};
  });
}

std::unique_ptr<OnnxOp> pool(const NodeSpec& spec, bool max) {
  const Window w = read_window(spec);
  const std::vector<int64_t> kernel = spec.ints("kernel_shape");
  if (kernel.size() != 2) spec.fail("only 2-D pooling is supported");
  if (w.auto_pad != "NOTSET") spec.fail(str("auto_pad=", w.auto_pad, " is not supported"));
  if (!w.pads.empty() && !symmetric(w.pads)) spec.fail("asymmetric pads are not supported");
  const bool ceil_mode = spec.i("ceil_mode", 0) != 0;
  const bool include_pad = spec.i("count_include_pad", 0) != 0;
  if (max && spec.i("storage_order", 0) != 0) spec.fail("storage_order=1 is not supported");
  return lambda_op([=](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, max ? "MaxPool" : "AveragePool");
    const auto strides = or_ones(w.strides, 2);
    const std::vector<int64_t> padding = w.pads.empty() ? std::vector<int64_t>{0, 0} : std::vector<int64_t>{w.pads[0], w.pads[1]};
    if (max) return Tensors{at::max_pool2d(x, kernel, strides, padding, or_ones(w.dilations, 2), ceil_mode)};
    return Tensors{at::avg_pool2d(x, kernel, strides, padding, ceil_mode, include_pad)};
  });
}

}  // namespace

void add_conv_ops(OpTable& t) {
  t["Conv"] = conv;
  t["ConvTranspose"] = conv_transpose;
  t["Gemm"] = gemm;
  t["MatMul"] = [](const NodeSpec&) {
    return lambda_op([](const Tensors& in, const RunContext&) { return Tensors{at::matmul(input(in, 0, "MatMul"), input(in, 1, "MatMul"))}; });
  };
  t["MaxPool"] = [](const NodeSpec& spec) { return pool(spec, true); };
  t["AveragePool"] = [](const NodeSpec& spec) { return pool(spec, false); };
  t["GlobalAveragePool"] = [](const NodeSpec&) {
    return lambda_op([](const Tensors& in, const RunContext&) {
      const at::Tensor& x = input(in, 0, "GlobalAveragePool");
      std::vector<int64_t> dims;
      for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
      return Tensors{x.mean(dims, true)};
    });
  };
}

}  // namespace framelift::models::onnx
