#include "infer/fp32_islands.h"

#include <ATen/ATen.h>

namespace framelift::infer {
namespace {

bool needs_fp32_island(const at::Tensor& x) {
  return x.is_cpu() && (x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf);
}

template <class Pad>
at::Tensor padded(const at::Tensor& x, at::IntArrayRef pads, Pad pad) {
  if (!needs_fp32_island(x)) return pad(x, pads);
  return pad(x.to(at::kFloat), pads).to(x.scalar_type());
}

}  // namespace

at::Tensor reflect_pad2d(const at::Tensor& x, at::IntArrayRef pads) {
  return padded(x, pads, [](const at::Tensor& t, at::IntArrayRef p) { return at::reflection_pad2d(t, p); });
}

at::Tensor replicate_pad2d(const at::Tensor& x, at::IntArrayRef pads) {
  return padded(x, pads, [](const at::Tensor& t, at::IntArrayRef p) { return at::replication_pad2d(t, p); });
}

at::Tensor conv_transpose2d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, at::IntArrayRef stride,
                            at::IntArrayRef padding, at::IntArrayRef output_padding, int64_t groups, at::IntArrayRef dilation) {
  if (!needs_fp32_island(x))
    return at::conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation);
  const at::Tensor b = bias.defined() ? bias.to(at::kFloat) : bias;
  return at::conv_transpose2d(x.to(at::kFloat), weight.to(at::kFloat), b, stride, padding, output_padding, groups, dilation)
      .to(x.scalar_type());
}

at::Tensor upsample_bilinear2d(const at::Tensor& x, at::IntArrayRef size, bool align_corners, c10::optional<double> scale_h,
                               c10::optional<double> scale_w) {
  if (!needs_fp32_island(x)) return at::upsample_bilinear2d(x, size, align_corners, scale_h, scale_w);
  return at::upsample_bilinear2d(x.to(at::kFloat), size, align_corners, scale_h, scale_w).to(x.scalar_type());
}

at::Tensor mish(const at::Tensor& x) {
  if (!needs_fp32_island(x)) return at::mish(x);
  return at::mish(x.to(at::kFloat)).to(x.scalar_type());
}

at::Tensor layer_norm(const at::Tensor& x, at::IntArrayRef shape, const at::Tensor& weight, const at::Tensor& bias, double eps) {
  if (!needs_fp32_island(x)) return at::layer_norm(x, shape, weight, bias, eps);
  const at::Tensor w = weight.defined() ? weight.to(at::kFloat) : weight, b = bias.defined() ? bias.to(at::kFloat) : bias;
  return at::layer_norm(x.to(at::kFloat), shape, w, b, eps).to(x.scalar_type());
}

at::Tensor group_norm(const at::Tensor& x, int64_t groups, const at::Tensor& weight, const at::Tensor& bias, double eps) {
  if (!needs_fp32_island(x)) return at::group_norm(x, groups, weight, bias, eps);
  return at::group_norm(x.to(at::kFloat), groups, weight.to(at::kFloat), bias.to(at::kFloat), eps).to(x.scalar_type());
}

}  // namespace framelift::infer
