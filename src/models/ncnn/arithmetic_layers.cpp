// BinaryOp, Eltwise, Scale, BatchNorm, Bias: arithmetic with ncnn's broadcasting rule.
#include <ATen/ATen.h>

#include "models/ncnn/builtin_layers.h"
#include "models/ncnn/ncnn_broadcast.h"
#include "models/ncnn/ncnn_tensor.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models::ncnn {
namespace {

enum BinaryKind { Add, Sub, Mul, Div, Max, Min, Pow, RSub, RDiv, RPow, Atan2, RAtan2, kBinaryKinds };

at::Tensor binary(int op, const at::Tensor& a, const at::Tensor& b) {
  switch (op) {
    case Add: return at::add(a, b);
    case Sub: return at::sub(a, b);
    case Mul: return at::mul(a, b);
    case Div: return at::div(a, b);
    case Max: return at::maximum(a, b);
    case Min: return at::minimum(a, b);
    case Pow: return at::pow(a, b);
    case RSub: return at::sub(b, a);
    case RDiv: return at::div(b, a);
    case RPow: return at::pow(b, a);
    case Atan2: return at::atan2(a, b);
    case RAtan2: return at::atan2(b, a);
    default: return {};
  }
}

// In-place form for the ops that have one; false when the caller must allocate.
bool binary_(int op, at::Tensor& a, const at::Tensor& b) {
  switch (op) {
    case Add: a.add_(b); return true;
    case Sub: a.sub_(b); return true;
    case Mul: a.mul_(b); return true;
    case Div: a.div_(b); return true;
    default: return false;
  }
}

class BinaryOpLayer : public NcnnOp {
 public:
  explicit BinaryOpLayer(const LayerSpec& spec) : name_(spec.layer.name) {
    const auto& p = spec.layer.params;
    op_ = p.get_int(0, 0);
    with_scalar_ = p.get_int(1, 0) != 0;
    scalar_ = p.get_float(2, 0.f);
    if (op_ < 0 || op_ >= kBinaryKinds) spec.fail(str("unsupported BinaryOp op_type ", op_));
    size_t want = with_scalar_ ? 1 : 2;
    if (spec.layer.inputs.size() != want) spec.fail(str("expects ", want, " inputs"));
  }

  Blobs forward(Blobs in) override {
    at::Tensor a = std::move(in.at(0));
    at::Tensor b;
    if (with_scalar_) {
      b = at::scalar_tensor(scalar_, a.options());
    } else {
      b = std::move(in.at(1));
      std::tie(a, b) = ncnn_broadcast(a, b, name_);
    }
    if (owned(a) && a.sizes() == at::infer_size(a.sizes(), b.sizes()) && binary_(op_, a, b)) return {a};
    return {binary(op_, a, b)};
  }

 private:
  std::string name_;
  int op_ = 0;
  bool with_scalar_ = false;
  float scalar_ = 0.f;
};

class EltwiseLayer : public NcnnOp {
 public:
  explicit EltwiseLayer(const LayerSpec& spec) {
    op_ = spec.layer.params.get_int(0, 0);
    coeffs_ = spec.layer.params.get_floats(1);
    if (op_ < 0 || op_ > 2) spec.fail(str("unsupported Eltwise op_type ", op_));
    if (!coeffs_.empty() && coeffs_.size() != spec.layer.inputs.size()) spec.fail("coeffs count differs from inputs");
  }

  Blobs forward(Blobs in) override {
    at::Tensor acc = std::move(in.at(0));
    bool coeff = op_ == 1 && !coeffs_.empty();
    if (coeff && coeffs_[0] != 1.f) acc = acc * coeffs_[0];
    else if (!owned(acc)) acc = acc.clone();
    for (size_t i = 1; i < in.size(); ++i) {
      if (op_ == 0) acc.mul_(in[i]);
      else if (op_ == 2) at::maximum_out(acc, acc, in[i]);
      else if (coeff) acc.add_(in[i], coeffs_[i]);
      else acc.add_(in[i]);
    }
    return {acc};
  }

 private:
  int op_ = 1;
  std::vector<float> coeffs_;
};

// Scale, Bias and BatchNorm: y = x * a + b with one value per outermost ncnn axis.
class AffineLayer : public NcnnOp {
 public:
  AffineLayer(at::Tensor scale, at::Tensor bias) : scale_(std::move(scale)), bias_(std::move(bias)) {}

  Blobs forward(Blobs in) override {
    at::Tensor x = std::move(in.at(0));
    if (in.size() > 1) {  // Scale with scale_data_size -233: the factor is the second blob
      auto [xs, s] = ncnn_broadcast(x, in[1], "Scale");
      at::Tensor y = xs * s;
      if (bias_.defined()) y.add_(outer_axis_view(bias_, y));
      return {y};
    }
    at::Tensor y = scale_.defined() ? x * outer_axis_view(scale_, x) : (owned(x) ? x : x.clone());
    if (bias_.defined()) y.add_(outer_axis_view(bias_, y));
    return {y};
  }

  void to(c10::Device device, c10::ScalarType dtype) override {
    if (scale_.defined()) scale_ = scale_.to(device, dtype);
    if (bias_.defined()) bias_ = bias_.to(device, dtype);
  }

 private:
  at::Tensor scale_, bias_;
};

std::unique_ptr<NcnnOp> make_batchnorm(const LayerSpec& spec) {
  float eps = spec.layer.params.get_float(1, 0.f);
  at::Tensor slope = spec.weight("weight"), mean = spec.weight("running_mean");
  at::Tensor var = spec.weight("running_var"), bias = spec.weight("bias");
  // ncnn folds the statistics the same way at load time: b = slope / sqrt(var + eps).
  at::Tensor sqrt_var = at::sqrt(var + eps).clamp_min(1e-4);
  at::Tensor scale = slope / sqrt_var;
  return std::make_unique<AffineLayer>(scale, bias - slope * mean / sqrt_var);
}

}  // namespace

void add_arithmetic_layers(FactoryTable& t) {
  t["BinaryOp"] = [](const LayerSpec& s) { return std::make_unique<BinaryOpLayer>(s); };
  t["Eltwise"] = [](const LayerSpec& s) { return std::make_unique<EltwiseLayer>(s); };
  t["Scale"] = [](const LayerSpec& s) -> std::unique_ptr<NcnnOp> {
    if (s.layer.params.get_int(0, 0) == -233) {
      if (s.layer.inputs.size() != 2) s.fail("scale_data_size -233 needs two inputs");
      return std::make_unique<AffineLayer>(at::Tensor(), s.optional_weight("bias"));
    }
    return std::make_unique<AffineLayer>(s.weight("weight"), s.optional_weight("bias"));
  };
  t["Bias"] = [](const LayerSpec& s) { return std::make_unique<AffineLayer>(at::Tensor(), s.weight("bias")); };
  t["BatchNorm"] = make_batchnorm;
}

}  // namespace framelift::models::ncnn
