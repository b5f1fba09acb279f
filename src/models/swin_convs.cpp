#include "models/swin_convs.h"

#include <ATen/ATen.h>

#include <cmath>

#include "models/state_dict_keys.h"
#include "util/str.h"

namespace framelift::models {

at::Tensor ResidualConv::operator()(const at::Tensor& x) const {
  at::Tensor y = convs[0](x);
  for (size_t i = 1; i < convs.size(); ++i) y = convs[i](at::leaky_relu(y, 0.2));
  return y;
}

void ResidualConv::visit_weights(const TensorVisitor& f) {
  for (Conv2d& c : convs) visit(c, f);
}

ResidualConv read_residual_conv(WeightReader& r, const std::string& p, int64_t c, bool three) {
  if (!three) return {{read_conv(r, p, c, c, 3)}};
  return {{read_conv(r, p + ".0", c, c / 4, 3), read_conv(r, p + ".2", c / 4, c / 4, 1), read_conv(r, p + ".4", c / 4, c, 3)}};
}

at::Tensor PixelShuffleUpsampler::operator()(const at::Tensor& x) const {
  at::Tensor y = x;
  for (size_t i = 0; i < convs.size(); ++i) y = at::pixel_shuffle(convs[i](y), factors[i]);
  return y;
}

void PixelShuffleUpsampler::visit_weights(const TensorVisitor& f) {
  for (Conv2d& c : convs) visit(c, f);
}

PixelShuffleUpsampler read_pixel_shuffle_upsampler(WeightReader& r, const std::string& prefix, int64_t feat, int64_t scale) {
  PixelShuffleUpsampler u;
  const bool three = scale == 3;
  const int steps = three ? 1 : int(std::lround(std::log2(double(scale))));
  for (int i = 0; i < steps; ++i) {
    u.convs.push_back(read_conv(r, str(prefix, ".", 2 * i), feat, (three ? 9 : 4) * feat, 3));
    u.factors.push_back(three ? 3 : 2);
  }
  return u;
}

UpsamplerScale pixel_shuffle_scale(const weights::StateDict& dict, const std::string& prefix) {
  UpsamplerScale s;
  for (int i = 0; dict.count(str(prefix, ".", i, ".weight")); i += 2) {
    const std::string key = str(prefix, ".", i, ".weight");
    const auto o = dim_of(dict, key, 4, 0), f = dim_of(dict, key, 4, 1);
    const std::optional<int> step = o && f ? shuffle_factor(*o, *f) : std::nullopt;
    if (!step || (*step != 2 && *step != 3)) return {1, str(prefix, ".", i, " is not a x2 or x3 pixel-shuffle convolution")};
    s.scale *= *step;
  }
  return s;
}

}  // namespace framelift::models
