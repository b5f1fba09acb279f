#include "models/ncnn/fused_activation.h"

#include <ATen/ATen.h>

#include "util/str.h"

namespace framelift::models::ncnn {

FusedActivation FusedActivation::from(const LayerSpec& spec) {
  FusedActivation a;
  a.type = spec.layer.params.get_int(9, 0);
  a.params = spec.layer.params.get_floats(10);
  if (a.type < 0 || a.type > 6) spec.fail(str("unsupported fused activation_type ", a.type));
  auto need = [&](size_t n) {
    if (a.params.size() < n) spec.fail(str("activation_type ", a.type, " needs ", n, " activation_params"));
  };
  if (a.type == 2) need(1);
  if (a.type == 3) need(2);
  if (a.type == 6) need(2);
  return a;
}

void FusedActivation::apply_(at::Tensor& x) const {
  switch (type) {
    case 1: x.relu_(); break;
    case 2: at::leaky_relu_(x, params[0]); break;
    case 3: x.clamp_(params[0], params[1]); break;
    case 4: x.sigmoid_(); break;
    case 5: x.mul_(at::tanh(at::softplus(x))); break;
    case 6: x.mul_(at::clamp(x * params[0] + params[1], 0.0, 1.0)); break;
    default: break;
  }
}

}  // namespace framelift::models::ncnn
