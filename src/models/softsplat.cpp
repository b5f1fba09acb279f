// Splatting as scatter-adds: four (one per bilinear neighbour) of every source pixel's values into
// the flattened output, the weight zeroed where the neighbour is outside the frame.
#include "models/softsplat.h"

#include <ATen/ATen.h>

#include <array>

#include "util/error.h"

namespace framelift::models {
namespace {

constexpr double kEpsilon = 1e-7;  // upstream's 'soft' mode (its default "addeps")

void check(const at::Tensor& input, const at::Tensor& flow) {
  if (input.dim() != 4 || flow.dim() != 4 || flow.size(1) != 2 || flow.size(0) != input.size(0) || flow.size(2) != input.size(2) ||
      flow.size(3) != input.size(3))
    throw Error(ErrorKind::Internal, "splatting takes input [N, C, H, W] and flow [N, 2, H, W] of one size");
}

// [N, 1, C or 1..., H*W] sums of x weighted by one corner, scattered to that corner's index.
at::Tensor splat_fp32(const at::Tensor& x, const at::Tensor& flow) {
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const auto opts = flow.options().dtype(at::kFloat);
  const at::Tensor fx = flow.select(1, 0).to(at::kFloat), fy = flow.select(1, 1).to(at::kFloat);
  at::Tensor px = at::arange(w, opts).view({1, 1, w}) + fx;  // [N, H, W]
  at::Tensor py = at::arange(h, opts).view({1, h, 1}) + fy;
  const at::Tensor finite = at::isfinite(px).logical_and(at::isfinite(py));
  px = at::where(finite, px, at::zeros_like(px));
  py = at::where(finite, py, at::zeros_like(py));
  const at::Tensor x0 = at::floor(px), y0 = at::floor(py), x1 = x0 + 1, y1 = y0 + 1;
  // Upstream's four weights, written as its kernel writes them (the corner opposite each one).
  const std::array<std::array<at::Tensor, 3>, 4> corners = {{{x0, y0, (x1 - px) * (y1 - py)},
                                                             {x1, y0, (px - x0) * (y1 - py)},
                                                             {x0, y1, (x1 - px) * (py - y0)},
                                                             {x1, y1, (px - x0) * (py - y0)}}};
  const at::Tensor values = x.to(at::kFloat).reshape({n, c, h * w});
  at::Tensor out = at::zeros({n, c, h * w}, opts);
  for (const auto& [cx, cy, weight] : corners) {
    const at::Tensor inside = finite.logical_and(cx >= 0).logical_and(cx < w).logical_and(cy >= 0).logical_and(cy < h);
    const at::Tensor index = (cy.clamp(0, h - 1) * w + cx.clamp(0, w - 1)).to(at::kLong).reshape({n, 1, h * w});
    const at::Tensor wt = at::where(inside, weight, at::zeros_like(weight)).reshape({n, 1, h * w});
    out.scatter_add_(2, index.expand({n, c, h * w}), values * wt);
  }
  return out.view({n, c, h, w});
}

// The splatted [input * e, e] with e = exp(metric), in fp32.
at::Tensor splat_soft(const at::Tensor& input, const at::Tensor& flow, const at::Tensor& metric) {
  check(input, flow);
  const at::Tensor e = metric.to(at::kFloat).exp();
  return splat_fp32(at::cat({input.to(at::kFloat) * e, e}, 1), flow);
}

}  // namespace

at::Tensor splat_sum(const at::Tensor& input, const at::Tensor& flow) {
  check(input, flow);
  return splat_fp32(input, flow).to(input.scalar_type());
}

at::Tensor softmax_splat(const at::Tensor& input, const at::Tensor& flow, const at::Tensor& metric) {
  const at::Tensor s = splat_soft(input, flow, metric);
  const int64_t c = input.size(1);
  return (s.narrow(1, 0, c) / (s.narrow(1, c, 1) + kEpsilon)).to(input.scalar_type());
}

at::Tensor softmax_splat_renormalised(const at::Tensor& input, const at::Tensor& flow, const at::Tensor& metric) {
  const at::Tensor s = splat_soft(input, flow, metric);
  const int64_t c = input.size(1);
  const at::Tensor sum = s.narrow(1, c, 1);
  const at::Tensor out = s.narrow(1, 0, c) / (sum + kEpsilon), norm = sum / (sum + kEpsilon);
  return at::where(norm > 0, out / norm, out).to(input.scalar_type());
}

}  // namespace framelift::models
