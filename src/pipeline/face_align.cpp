#include "pipeline/face_align.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace framelift::pipeline {
namespace {

// facexlib's template for a 512 crop: eyes, nose tip, mouth corners.
constexpr std::array<double, 10> kTemplate512 = {192.98138, 239.94708, 318.90277, 240.1936, 256.63416,
                                                 314.01935, 201.26117, 371.41043, 313.08905, 371.15118};

// [1, h, w, 2] sampling grid (align_corners: -1 and 1 are the first and last pixel centres) that
// reads, for each pixel (x0 + i, y0 + j) of the output, the source point map(x, y) of a source
// width x height. Built on the CPU in double (coordinates of large frames); sample() moves it.
at::Tensor sampling_grid(const Similarity& map, int64_t x0, int64_t y0, int64_t w, int64_t h, int64_t src_w, int64_t src_h) {
  const auto opts = at::TensorOptions().dtype(at::kDouble);
  const at::Tensor xs = at::arange(x0, x0 + w, opts).view({1, w}).expand({h, w});
  const at::Tensor ys = at::arange(y0, y0 + h, opts).view({h, 1}).expand({h, w});
  const at::Tensor sx = xs * map.a - ys * map.b + map.tx, sy = xs * map.b + ys * map.a + map.ty;
  const at::Tensor gx = sx * (2.0 / double(std::max<int64_t>(src_w - 1, 1))) - 1, gy = sy * (2.0 / double(std::max<int64_t>(src_h - 1, 1))) - 1;
  return at::stack({gx, gy}, -1).unsqueeze(0).to(at::kFloat);
}

// src [1, C, H, W] sampled bilinearly at grid; zero outside, as warpAffine's constant border, or
// (edge) the nearest edge pixel.
at::Tensor sample(const at::Tensor& src, const at::Tensor& grid, bool edge = false) {
  return at::grid_sampler_2d(src, grid.to(src.device(), src.scalar_type()), /*bilinear*/ 0, /*zeros or border*/ edge ? 1 : 0,
                             /*align_corners*/ true);
}

// cv2.erode with a k x k box (anchor k/2) and its default border, which never erodes: x [1, 1, H, W].
at::Tensor erode(const at::Tensor& x, int64_t k) {
  if (k <= 1) return x;
  const int64_t before = k / 2, after = k - 1 - before;
  const at::Tensor padded = at::constant_pad_nd(x, {before, after, before, after}, 2.0);
  return -at::max_pool2d(-padded, {k, k}, {1, 1});
}

// cv2.GaussianBlur with ksize k (odd) and sigma 0 (derived from k as OpenCV does), its default
// border (reflect-101: PyTorch's reflect). x [1, 1, H, W].
at::Tensor gaussian_blur(const at::Tensor& x, int64_t k) {
  if (k <= 1) return x;
  const double sigma = 0.3 * ((double(k) - 1) * 0.5 - 1) + 0.8;
  const at::Tensor t = at::arange(k, at::TensorOptions().dtype(at::kDouble)) - double(k / 2);
  at::Tensor kernel = at::exp(-(t * t) / (2 * sigma * sigma));
  kernel = (kernel / kernel.sum()).to(x.device(), x.scalar_type());
  const int64_t r = k / 2;
  const int64_t ry = std::min(r, x.size(2) - 1), rx = std::min(r, x.size(3) - 1);
  at::Tensor padded = at::reflection_pad2d(x, {rx, rx, ry, ry});
  if (rx < r || ry < r) padded = at::constant_pad_nd(padded, {r - rx, r - rx, r - ry, r - ry}, 0.0);
  const at::Tensor rows = at::conv2d(padded, kernel.view({1, 1, 1, k}));
  return at::conv2d(rows, kernel.view({1, 1, k, 1}));
}

}  // namespace

Similarity Similarity::inverse() const {
  const double d = a * a + b * b;
  Similarity inv{a / d, -b / d, 0, 0};
  inv.tx = -(inv.a * tx - inv.b * ty);
  inv.ty = -(inv.b * tx + inv.a * ty);
  return inv;
}

std::array<double, 2> Similarity::apply(double x, double y) const { return {a * x - b * y + tx, b * x + a * y + ty}; }

Landmarks5 face_template(int64_t face_size) {
  Landmarks5 t{};
  for (size_t i = 0; i < t.size(); ++i) t[i] = float(kTemplate512[i] * double(face_size) / 512.0);
  return t;
}

Similarity fit_similarity(const Landmarks5& from, const Landmarks5& to) {
  // Centred, the least-squares a and b have a closed form; the shift then maps centroid to centroid.
  double fx = 0, fy = 0, gx = 0, gy = 0;
  for (int i = 0; i < 5; ++i) {
    fx += from[2 * i] / 5.0;
    fy += from[2 * i + 1] / 5.0;
    gx += to[2 * i] / 5.0;
    gy += to[2 * i + 1] / 5.0;
  }
  double dot = 0, cross = 0, norm = 0;
  for (int i = 0; i < 5; ++i) {
    const double x = from[2 * i] - fx, y = from[2 * i + 1] - fy, u = to[2 * i] - gx, v = to[2 * i + 1] - gy;
    dot += x * u + y * v;
    cross += x * v - y * u;
    norm += x * x + y * y;
  }
  Similarity s;
  if (norm <= 0) return s;
  s.a = dot / norm;
  s.b = cross / norm;
  s.tx = gx - (s.a * fx - s.b * fy);
  s.ty = gy - (s.b * fx + s.a * fy);
  return s;
}

at::Tensor warp_face(const at::Tensor& frame, const Similarity& to_crop, int64_t face_size) {
  const at::Tensor border = at::tensor({132.0, 133.0, 135.0}, frame.options()).view({1, 3, 1, 1}) / 255.0;
  const at::Tensor grid = sampling_grid(to_crop.inverse(), 0, 0, face_size, face_size, frame.size(2), frame.size(1));
  return (sample(frame.unsqueeze(0) - border, grid) + border)[0];
}

void paste_face(at::Tensor& frame, const at::Tensor& face, const Similarity& to_crop) {
  const int64_t h = frame.size(1), w = frame.size(2), s = face.size(2);
  const Similarity back = to_crop.inverse();
  double x_lo = 1e300, x_hi = -1e300, y_lo = 1e300, y_hi = -1e300;
  for (const double u : {0.0, double(s - 1)})
    for (const double v : {0.0, double(s - 1)}) {
      const auto [x, y] = back.apply(u, v);
      x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x), y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    }
  // The footprint and two pixels around it (the bilinear fringe), inside the frame.
  const auto clip = [](double v, int64_t hi) { return std::clamp<int64_t>(int64_t(std::floor(v)), 0, hi); };
  const int64_t x0 = clip(x_lo - 2, w), x1 = clip(x_hi + 3, w), y0 = clip(y_lo - 2, h), y1 = clip(y_hi + 3, h);
  if (x1 <= x0 || y1 <= y0) return;
  const at::Tensor grid = sampling_grid(to_crop, x0, y0, x1 - x0, y1 - y0, s, s);
  const at::Tensor restored = sample(face.clamp(0, 1).unsqueeze(0).to(frame.scalar_type()), grid, /*edge*/ true);
  // Snapped to 0 and 1 within float noise of the grid: a pixel centre that lands on the square's
  // edge (an integer shift) would otherwise read 1e-5 and count as footprint.
  at::Tensor footprint = sample(at::ones({1, 1, s, s}, frame.options()), grid);
  footprint = at::where(footprint < 1e-4, at::zeros_like(footprint), at::where(footprint > 1 - 1e-4, at::ones_like(footprint), footprint));
  const at::Tensor eroded = erode(footprint, 2);
  const int64_t edge = int64_t(std::sqrt(eroded.sum().item<double>())) / 20;
  // OpenCV takes an empty kernel (a tiny face: edge 0) as its default 3 x 3.
  const at::Tensor centre = erode(eroded, edge > 0 ? 2 * edge : 3);
  // Capped by the footprint: the box erosion's anchor leaves the soft mask reaching the square's
  // far (right, bottom) edges, where upstream blends in a face faded by the footprint and zero
  // padding and so draws a dark line along them. Here the face is read up to its edge pixels and
  // the mask never reaches past the footprint.
  const at::Tensor soft = at::minimum(gaussian_blur(centre, 2 * edge + 1), eroded);
  at::Tensor roi = frame.narrow(1, y0, y1 - y0).narrow(2, x0, x1 - x0);
  roi.copy_((soft * restored + (1 - soft) * roi.unsqueeze(0))[0]);
}

}  // namespace framelift::pipeline
