// Element-wise arithmetic, comparisons, activations, Clip, Where and Cast.
#include <cmath>

#include <ATen/ATen.h>

#include "models/onnx/builtin_ops.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/onnx_tensor.h"

namespace framelift::models::onnx {
namespace {

using Binary = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
using Unary = at::Tensor (*)(const at::Tensor&);

OpFactory binary(Binary fn) {
  return [fn](const NodeSpec&) {
    return lambda_op([fn](const Tensors& in, const RunContext&) { return Tensors{fn(input(in, 0, "binary"), input(in, 1, "binary"))}; });
  };
}

OpFactory unary(Unary fn) {
  return [fn](const NodeSpec&) {
    return lambda_op([fn](const Tensors& in, const RunContext&) { return Tensors{fn(input(in, 0, "unary"))}; });
  };
}

// ONNX integer division truncates; float division is true division.
at::Tensor div(const at::Tensor& a, const at::Tensor& b) {
  if (at::isIntegralType(a.scalar_type(), true) && at::isIntegralType(b.scalar_type(), true)) return at::div(a, b, "trunc");
  return at::div(a, b);
}
// ONNX Pow keeps the base's type (an int exponent on a float base, a float constant on bf16).
at::Tensor pow(const at::Tensor& a, const at::Tensor& b) {
  if (b.numel() == 1 && !at::isIntegralType(a.scalar_type(), true)) {
    const double e = b.item<double>();
    if (e == 2.0) return a * a;
    if (e == 0.5) return at::sqrt(a);
    return at::pow(a, e);
  }
  return at::pow(a, b.to(a.scalar_type()));
}
at::Tensor eq(const at::Tensor& a, const at::Tensor& b) { return at::eq(a, b); }
at::Tensor lt(const at::Tensor& a, const at::Tensor& b) { return at::lt(a, b); }
at::Tensor gt(const at::Tensor& a, const at::Tensor& b) { return at::gt(a, b); }
at::Tensor logical_and(const at::Tensor& a, const at::Tensor& b) { return at::logical_and(a, b); }
at::Tensor logical_or(const at::Tensor& a, const at::Tensor& b) { return at::logical_or(a, b); }
at::Tensor relu(const at::Tensor& x) { return at::relu(x); }
at::Tensor sigmoid(const at::Tensor& x) { return at::sigmoid(x); }
at::Tensor tanh(const at::Tensor& x) { return at::tanh(x); }
at::Tensor erf(const at::Tensor& x) { return at::erf(x); }
at::Tensor sqrt(const at::Tensor& x) { return at::sqrt(x); }
at::Tensor exp(const at::Tensor& x) { return at::exp(x); }
at::Tensor log(const at::Tensor& x) { return at::log(x); }
at::Tensor neg(const at::Tensor& x) { return at::neg(x); }
at::Tensor abs(const at::Tensor& x) { return at::abs(x); }
at::Tensor reciprocal(const at::Tensor& x) { return at::reciprocal(x); }
at::Tensor floor(const at::Tensor& x) { return at::floor(x); }
at::Tensor ceil(const at::Tensor& x) { return at::ceil(x); }
// ONNX Round rounds halves to even, as at::round does.
at::Tensor round(const at::Tensor& x) { return at::round(x); }
at::Tensor sign(const at::Tensor& x) { return at::sign(x); }
at::Tensor sin(const at::Tensor& x) { return at::sin(x); }
at::Tensor cos(const at::Tensor& x) { return at::cos(x); }
at::Tensor logical_not(const at::Tensor& x) { return at::logical_not(x); }
at::Tensor softplus(const at::Tensor& x) { return at::softplus(x); }
at::Tensor identity(const at::Tensor& x) { return x; }
at::Tensor hardswish(const at::Tensor& x) { return at::hardswish(x); }
at::Tensor mish(const at::Tensor& x) { return x * at::tanh(at::softplus(x)); }

std::unique_ptr<OnnxOp> leaky_relu(const NodeSpec& spec) {
  const double alpha = spec.f("alpha", 0.01f);
  return lambda_op([alpha](const Tensors& in, const RunContext&) { return Tensors{at::leaky_relu(input(in, 0, "LeakyRelu"), alpha)}; });
}

// ONNX's slope broadcasts like any binary operand ([C, 1, 1] from PyTorch's PReLU): written as
// a where() rather than at::prelu, which wants a [C] weight.
std::unique_ptr<OnnxOp> prelu(const NodeSpec&) {
  return lambda_op([](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "PRelu");
    const at::Tensor& slope = input(in, 1, "PRelu");
    if (x.dim() == 4 && slope.numel() == x.size(1)) return Tensors{at::prelu(x, slope.reshape({x.size(1)}))};
    return Tensors{at::where(x >= 0, x, x * slope)};
  });
}

std::unique_ptr<OnnxOp> elu(const NodeSpec& spec) {
  const double alpha = spec.f("alpha", 1.f);
  return lambda_op([alpha](const Tensors& in, const RunContext&) { return Tensors{at::elu(input(in, 0, "Elu"), alpha)}; });
}

std::unique_ptr<OnnxOp> hard_sigmoid(const NodeSpec& spec) {
  const double alpha = spec.f("alpha", 0.2f), beta = spec.f("beta", 0.5f);
  return lambda_op([alpha, beta](const Tensors& in, const RunContext&) {
    return Tensors{at::clamp(input(in, 0, "HardSigmoid") * alpha + beta, 0.0, 1.0)};
  });
}

std::unique_ptr<OnnxOp> gelu(const NodeSpec& spec) {
  const std::string approximate = spec.choice("approximate", "none", {"none", "tanh"});
  return lambda_op([approximate](const Tensors& in, const RunContext&) { return Tensors{at::gelu(input(in, 0, "Gelu"), approximate)}; });
}

std::unique_ptr<OnnxOp> clip(const NodeSpec& spec) {
  return lambda_op([](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "Clip");
    c10::optional<at::Scalar> lo, hi;
    if (in.size() > 1 && in[1].defined()) lo = in[1].item();
    if (in.size() > 2 && in[2].defined()) hi = in[2].item();
    return Tensors{at::clamp(x, lo, hi)};
  });
}

std::unique_ptr<OnnxOp> where(const NodeSpec&) {
  return lambda_op([](const Tensors& in, const RunContext&) {
    const at::Tensor& c = input(in, 0, "Where");
    at::Tensor a = input(in, 1, "Where"), b = input(in, 2, "Where");
    if (a.scalar_type() != b.scalar_type()) b = b.to(a.scalar_type());
    return Tensors{at::where(c.to(at::kBool).to(a.device()), a, b.to(a.device()))};
  });
}

// The variadic Max/Min/Sum/Mean: a fold of the binary op.
OpFactory variadic(Binary fn, bool mean) {
  return [fn, mean](const NodeSpec&) {
    return lambda_op([fn, mean](const Tensors& in, const RunContext&) {
      at::Tensor acc = input(in, 0, "variadic");
      for (size_t k = 1; k < in.size(); ++k) acc = fn(acc, in[k]);
      if (mean) acc = acc / static_cast<double>(in.size());
      return Tensors{acc};
    });
  };
}
at::Tensor maximum(const at::Tensor& a, const at::Tensor& b) { return at::maximum(a, b); }
at::Tensor minimum(const at::Tensor& a, const at::Tensor& b) { return at::minimum(a, b); }
at::Tensor add(const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); }

// Float types mean the run's precision: a bf16 run's Cast(to=float) must not leave it.
std::optional<c10::ScalarType> cast_target(int64_t to, c10::ScalarType float_type) {
  const auto type = weights::onnx::scalar_type(static_cast<weights::onnx::DataType>(to));
  if (type && at::isFloatingType(*type)) return float_type;
  return type;
}

std::unique_ptr<OnnxOp> cast(const NodeSpec& spec) {
  const int64_t to = spec.i("to", 0);
  if (!cast_target(to, at::kFloat))
    spec.fail(str("cast to ", weights::onnx::data_type_name(static_cast<weights::onnx::DataType>(to)), " is not supported"));
  return lambda_op([to](const Tensors& in, const RunContext& context) {
    const at::Tensor& x = input(in, 0, "Cast");
    const auto type = *cast_target(to, context.float_type);
    // Float to integer truncates toward zero in ONNX, as in ATen.
    return Tensors{x.to(type)};
  });
}

}  // namespace

void add_elementwise_ops(OpTable& t) {
  t["Add"] = binary([](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); });
  t["Sub"] = binary([](const at::Tensor& a, const at::Tensor& b) { return at::sub(a, b); });
  t["Mul"] = binary([](const at::Tensor& a, const at::Tensor& b) { return at::mul(a, b); });
  t["Div"] = binary(div);
  t["Pow"] = binary(pow);
  t["Equal"] = binary(eq);
  t["Less"] = binary(lt);
  t["Greater"] = binary(gt);
  t["And"] = binary(logical_and);
  t["Or"] = binary(logical_or);
  t["Not"] = unary(logical_not);
  t["Max"] = variadic(maximum, false);
  t["Min"] = variadic(minimum, false);
  t["Sum"] = variadic(add, false);
  t["Mean"] = variadic(add, true);
  t["Relu"] = unary(relu);
  t["Sigmoid"] = unary(sigmoid);
  t["Tanh"] = unary(tanh);
  t["Erf"] = unary(erf);
  t["Sqrt"] = unary(sqrt);
  t["Exp"] = unary(exp);
  t["Log"] = unary(log);
  t["Neg"] = unary(neg);
  t["Abs"] = unary(abs);
  t["Reciprocal"] = unary(reciprocal);
  t["Floor"] = unary(floor);
  t["Ceil"] = unary(ceil);
  t["Round"] = unary(round);
  t["Sign"] = unary(sign);
  t["Sin"] = unary(sin);
  t["Cos"] = unary(cos);
  t["Softplus"] = unary(softplus);
  t["HardSwish"] = unary(hardswish);
  t["Mish"] = unary(mish);
  t["Identity"] = unary(identity);
  t["LeakyRelu"] = leaky_relu;
  t["PRelu"] = prelu;
  t["Elu"] = elu;
  t["HardSigmoid"] = hard_sigmoid;
  t["Gelu"] = gelu;
  t["Clip"] = clip;
  t["Where"] = where;
  t["Cast"] = cast;
}

}  // namespace framelift::models::onnx
