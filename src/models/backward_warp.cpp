#include "models/backward_warp.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "infer/fp32_islands.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {

at::Tensor backward_warp(const at::Tensor& image, const at::Tensor& flow) {
  if (image.dim() != 4 || flow.dim() != 4 || flow.size(1) != 2 || flow.size(0) != image.size(0) ||
      flow.size(2) != image.size(2) || flow.size(3) != image.size(3)) {
    throw Error(ErrorKind::Model, framelift::str("warp: image ", image.sizes(), " and flow ", flow.sizes(),
                                                 " do not match (flow must be [N, 2, H, W])"));
  }
  const int64_t n = image.size(0), h = image.size(2), w = image.size(3);
  const auto fp32 = flow.options().dtype(at::kFloat);
  // align_corners=True maps -1 and +1 to the centres of the first and last pixels.
  const double sx = 2.0 / double(std::max<int64_t>(1, w - 1)), sy = 2.0 / double(std::max<int64_t>(1, h - 1));
  at::Tensor f = flow.to(at::kFloat);
  at::Tensor gx = at::linspace(-1.0, 1.0, w, fp32).view({1, 1, w}) + f.select(1, 0) * sx;
  at::Tensor gy = at::linspace(-1.0, 1.0, h, fp32).view({1, h, 1}) + f.select(1, 1) * sy;
  at::Tensor grid = at::stack({gx.expand({n, h, w}), gy.expand({n, h, w})}, 3);
  at::Tensor out = at::grid_sampler(image.to(at::kFloat), grid, /*bilinear*/ 0, /*border*/ 1, /*align_corners*/ true);
  return out.to(image.scalar_type());
}

at::Tensor resize_bilinear(const at::Tensor& x, double factor) {
  if (factor == 1.0) return x;
  const int64_t h = static_cast<int64_t>(x.size(2) * factor), w = static_cast<int64_t>(x.size(3) * factor);
  return infer::upsample_bilinear2d(x, {h, w}, false, factor, factor);
}

}  // namespace framelift::models
