// Element-wise activations: ReLU, PReLU, Clip, Sigmoid, TanH, Swish, Mish, HardSigmoid, HardSwish,
// ELU, GELU, UnaryOp, Exp, Log, Power, AbsVal, Softmax, Dropout, Noop.
#include <cfloat>

#include <ATen/ATen.h>

#include "models/ncnn/builtin_layers.h"
#include "models/ncnn/ncnn_tensor.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models::ncnn {
namespace {

using Unary = std::function<at::Tensor(const at::Tensor&)>;
using UnaryInPlace = std::function<void(at::Tensor&)>;

// An activation that overwrites its input when it owns it, and allocates otherwise.
LayerFactory elementwise(std::function<std::pair<Unary, UnaryInPlace>(const LayerSpec&)> make) {
  return [make](const LayerSpec& spec) -> std::unique_ptr<NcnnOp> {
    auto [out_of_place, in_place] = make(spec);
    return std::make_unique<LambdaOp>([out_of_place, in_place](Blobs in) -> Blobs {
      at::Tensor x = std::move(in.at(0));
      if (in_place && owned(x)) {
        in_place(x);
        return {x};
      }
      return {out_of_place(x)};
    });
  };
}

class PReLUOp : public NcnnOp {
 public:
  explicit PReLUOp(const LayerSpec& spec) : slope_(spec.weight("weight")) {}
  Blobs forward(Blobs in) override { return {at::prelu(in.at(0), slope_)}; }
  void to(c10::Device device, c10::ScalarType dtype) override { slope_ = slope_.to(device, dtype); }

 private:
  at::Tensor slope_;
};

at::Tensor unary_op(const at::Tensor& x, int op, const LayerSpec* spec) {
  switch (op) {
    case 0: return at::abs(x);
    case 1: return at::neg(x);
    case 2: return at::floor(x);
    case 3: return at::ceil(x);
    case 4: return at::square(x);
    case 5: return at::sqrt(x);
    case 6: return at::rsqrt(x);
    case 7: return at::exp(x);
    case 8: return at::log(x);
    case 9: return at::sin(x);
    case 10: return at::cos(x);
    case 11: return at::tan(x);
    case 12: return at::asin(x);
    case 13: return at::acos(x);
    case 14: return at::atan(x);
    case 15: return at::reciprocal(x);
    case 16: return at::tanh(x);
    case 17: return at::log10(x);
    case 18: return at::round(x);
    case 19: return at::trunc(x);
    default: break;
  }
  if (spec) spec->fail(str("unsupported UnaryOp op_type ", op));
  return x;
}

}  // namespace

void add_activation_layers(FactoryTable& t) {
  t["ReLU"] = elementwise([](const LayerSpec& s) -> std::pair<Unary, UnaryInPlace> {
    float slope = s.layer.params.get_float(0, 0.f);
    if (slope == 0.f) return {[](const at::Tensor& x) { return at::relu(x); }, [](at::Tensor& x) { x.relu_(); }};
    return {[slope](const at::Tensor& x) { return at::leaky_relu(x, slope); },
            [slope](at::Tensor& x) { at::leaky_relu_(x, slope); }};
  });
  t["PReLU"] = [](const LayerSpec& s) { return std::make_unique<PReLUOp>(s); };
  t["Clip"] = elementwise([](const LayerSpec& s) -> std::pair<Unary, UnaryInPlace> {
    double lo = s.layer.params.get_float(0, -FLT_MAX), hi = s.layer.params.get_float(1, FLT_MAX);
    return {[lo, hi](const at::Tensor& x) { return at::clamp(x, lo, hi); },
            [lo, hi](at::Tensor& x) { x.clamp_(lo, hi); }};
  });
  t["Sigmoid"] = elementwise([](const LayerSpec&) -> std::pair<Unary, UnaryInPlace> {
    return {[](const at::Tensor& x) { return at::sigmoid(x); }, [](at::Tensor& x) { x.sigmoid_(); }};
  });
  t["TanH"] = elementwise([](const LayerSpec&) -> std::pair<Unary, UnaryInPlace> {
    return {[](const at::Tensor& x) { return at::tanh(x); }, [](at::Tensor& x) { x.tanh_(); }};
  });
  t["Swish"] = elementwise([](const LayerSpec&) -> std::pair<Unary, UnaryInPlace> {
    return {[](const at::Tensor& x) { return at::silu(x); }, [](at::Tensor& x) { at::silu_(x); }};
  });
  t["Mish"] = elementwise([](const LayerSpec&) -> std::pair<Unary, UnaryInPlace> {
    return {[](const at::Tensor& x) { return at::mish(x); }, [](at::Tensor& x) { at::mish_(x); }};
  });
  t["HardSigmoid"] = elementwise([](const LayerSpec& s) -> std::pair<Unary, UnaryInPlace> {
    double a = s.layer.params.get_float(0, 0.2f), b = s.layer.params.get_float(1, 0.5f);
    return {[a, b](const at::Tensor& x) { return at::clamp(x * a + b, 0.0, 1.0); }, nullptr};
  });
  t["HardSwish"] = elementwise([](const LayerSpec& s) -> std::pair<Unary, UnaryInPlace> {
    double a = s.layer.params.get_float(0, 0.2f), b = s.layer.params.get_float(1, 0.5f);
    return {[a, b](const at::Tensor& x) { return x * at::clamp(x * a + b, 0.0, 1.0); }, nullptr};
  });
  t["ELU"] = elementwise([](const LayerSpec& s) -> std::pair<Unary, UnaryInPlace> {
    double alpha = s.layer.params.get_float(0, 0.1f);
    return {[alpha](const at::Tensor& x) { return at::elu(x, alpha); }, [alpha](at::Tensor& x) { at::elu_(x, alpha); }};
  });
  t["GELU"] = elementwise([](const LayerSpec& s) -> std::pair<Unary, UnaryInPlace> {
    std::string approximate = s.layer.params.get_int(0, 0) ? "tanh" : "none";
    return {[approximate](const at::Tensor& x) { return at::gelu(x, approximate); }, nullptr};
  });
  t["AbsVal"] = elementwise([](const LayerSpec&) -> std::pair<Unary, UnaryInPlace> {
    return {[](const at::Tensor& x) { return at::abs(x); }, [](at::Tensor& x) { x.abs_(); }};
  });
  t["UnaryOp"] = elementwise([](const LayerSpec& s) -> std::pair<Unary, UnaryInPlace> {
    int op = s.layer.params.get_int(0, 0);
    unary_op(at::zeros({1}), op, &s);  // rejects unknown op types at load time
    return {[op](const at::Tensor& x) { return unary_op(x, op, nullptr); }, nullptr};
  });
  // Exp, Log and Power use base/scale/shift: f(shift + scale * x).
  t["Exp"] = elementwise([](const LayerSpec& s) -> std::pair<Unary, UnaryInPlace> {
    double base = s.layer.params.get_float(0, -1.f), scale = s.layer.params.get_float(1, 1.f),
           shift = s.layer.params.get_float(2, 0.f);
    double log_base = base == -1.0 ? 1.0 : std::log(base);
    return {[=](const at::Tensor& x) { return at::exp((x * scale + shift) * log_base); }, nullptr};
  });
  t["Log"] = elementwise([](const LayerSpec& s) -> std::pair<Unary, UnaryInPlace> {
    double base = s.layer.params.get_float(0, -1.f), scale = s.layer.params.get_float(1, 1.f),
           shift = s.layer.params.get_float(2, 0.f);
    double inv_log_base = base == -1.0 ? 1.0 : 1.0 / std::log(base);
    return {[=](const at::Tensor& x) { return at::log(x * scale + shift) * inv_log_base; }, nullptr};
  });
  t["Power"] = elementwise([](const LayerSpec& s) -> std::pair<Unary, UnaryInPlace> {
    double power = s.layer.params.get_float(0, 1.f), scale = s.layer.params.get_float(1, 1.f),
           shift = s.layer.params.get_float(2, 0.f);
    return {[=](const at::Tensor& x) { return at::pow(x * scale + shift, power); }, nullptr};
  });
  t["Dropout"] = elementwise([](const LayerSpec& s) -> std::pair<Unary, UnaryInPlace> {
    double scale = s.layer.params.get_float(0, 1.f);
    if (scale == 1.0) return {[](const at::Tensor& x) { return x; }, [](at::Tensor&) {}};
    return {[scale](const at::Tensor& x) { return x * scale; }, [scale](at::Tensor& x) { x.mul_(scale); }};
  });
  t["Noop"] = [](const LayerSpec&) { return std::make_unique<LambdaOp>([](Blobs in) { return in; }); };
  t["Softmax"] = [](const LayerSpec& s) -> std::unique_ptr<NcnnOp> {
    int axis = s.layer.params.get_int(0, 0);
    std::string name = s.layer.name;
    return std::make_unique<LambdaOp>([axis, name](Blobs in) -> Blobs {
      const at::Tensor& x = in.at(0);
      int64_t d = tensor_axis(axis, ncnn_dims(x));
      if (d < 0) throw Error(ErrorKind::Model, str("ncnn layer ", name, ": softmax axis ", axis, " out of range"));
      return {at::softmax(x, d)};
    });
  };
}

}  // namespace framelift::models::ncnn
