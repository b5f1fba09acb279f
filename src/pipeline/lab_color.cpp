#include "pipeline/lab_color.h"

#include <ATen/ATen.h>

#include <limits>

namespace framelift::pipeline {
namespace {

// OpenCV's sRGB <-> XYZ (D65) matrices and white point (color_lab.cpp).
constexpr double kToXyz[3][3] = {{0.412453, 0.357580, 0.180423}, {0.212671, 0.715160, 0.072169}, {0.019334, 0.119193, 0.950227}};
constexpr double kToRgb[3][3] = {{3.240479, -1.53715, -0.498535}, {-0.969256, 1.875991, 0.041556}, {0.055648, -0.204043, 1.057311}};
constexpr double kWhiteX = 0.950456, kWhiteZ = 1.088754;
constexpr double kEpsilon = 0.008856, kKappa = 903.3;

int64_t channel_axis(const at::Tensor& t) { return t.dim() - 3; }

at::Tensor mix(const at::Tensor& t, const double (&m)[3][3]) {
  const int64_t c = channel_axis(t);
  const at::Tensor r = t.select(c, 0), g = t.select(c, 1), b = t.select(c, 2);
  return at::stack({r * m[0][0] + g * m[0][1] + b * m[0][2], r * m[1][0] + g * m[1][1] + b * m[1][2],
                    r * m[2][0] + g * m[2][1] + b * m[2][2]},
                   c);
}

at::Tensor f(const at::Tensor& t) { return at::where(t > kEpsilon, t.pow(1.0 / 3.0), t * 7.787 + 16.0 / 116.0); }

at::Tensor f_inverse(const at::Tensor& t) { return at::where(t > 0.206897, t.pow(3), (t - 16.0 / 116.0) / 7.787); }

}  // namespace

at::Tensor srgb_to_lab(const at::Tensor& rgb) {
  const at::Tensor linear = at::where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055).pow(2.4));
  const at::Tensor xyz = mix(linear, kToXyz);
  const int64_t c = channel_axis(xyz);
  const at::Tensor x = xyz.select(c, 0) / kWhiteX, y = xyz.select(c, 1), z = xyz.select(c, 2) / kWhiteZ;
  const at::Tensor fy = f(y);
  const at::Tensor l = at::where(y > kEpsilon, fy * 116.0 - 16.0, y * kKappa);
  return at::stack({l, (f(x) - fy) * 500.0, (fy - f(z)) * 200.0}, c);
}

at::Tensor lab_to_srgb(const at::Tensor& lab) {
  const int64_t c = channel_axis(lab);
  const at::Tensor l = lab.select(c, 0), a = lab.select(c, 1), b = lab.select(c, 2);
  const at::Tensor y = at::where(l <= 8.0, l / kKappa, ((l + 16.0) / 116.0).pow(3));
  const at::Tensor fy = at::where(l <= 8.0, y * 7.787 + 16.0 / 116.0, (l + 16.0) / 116.0);
  const at::Tensor xyz = at::stack({f_inverse(a / 500.0 + fy) * kWhiteX, y, f_inverse(fy - b / 200.0) * kWhiteZ}, c);
  const at::Tensor linear = mix(xyz, kToRgb).clamp(0, 1);
  return at::where(linear <= 0.0031308, linear * 12.92, linear.pow(1.0 / 2.4) * 1.055 - 0.055);
}

at::Tensor with_luma_of(const at::Tensor& colour, const at::Tensor& source, double kr, double kb) {
  const auto luma = [&](const at::Tensor& t) { return t[0] * kr + t[1] * (1 - kr - kb) + t[2] * kb; };
  const at::Tensor y = luma(source).unsqueeze(0);          // [1, H, W], in [0, 1]
  const at::Tensor d = colour - luma(colour).unsqueeze(0);  // chroma: colour's offsets from its own luma
  const double inf = std::numeric_limits<double>::infinity();
  // The largest k <= 1 with y + k d inside [0, 1] on every channel.
  const at::Tensor up = at::where(d > 0, (1 - y) / d, at::full_like(d, inf)), down = at::where(d < 0, y / -d, at::full_like(d, inf));
  const at::Tensor k = at::minimum(up, down).amin(0, true).clamp_max(1.0);
  return y + k * d;
}

}  // namespace framelift::pipeline
