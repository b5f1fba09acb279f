#include "pipeline/scene_change.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace framelift::pipeline {

at::Tensor scene_thumbnail(const at::Tensor& image) {
  const int64_t h = image.size(-2), w = image.size(-1);
  const int64_t tw = std::min<int64_t>(64, w), th = std::max<int64_t>(1, h * tw / w);
  // BT.709 luma weights: a colour change counts as much as the eye sees it.
  at::Tensor rgb = image.to(at::kFloat).reshape({1, 3, h, w});
  at::Tensor grey = (rgb.select(1, 0) * 0.2126 + rgb.select(1, 1) * 0.7152 + rgb.select(1, 2) * 0.0722).unsqueeze(1);
  return at::adaptive_avg_pool2d(grey, {th, tw});
}

double thumbnail_difference(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().mean().item<double>(); }

}  // namespace framelift::pipeline
