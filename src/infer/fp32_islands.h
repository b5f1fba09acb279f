#pragma once
// Operators libtorch 1.13 has no reduced-precision CPU kernel for, in any precision: on the CPU
// in bf16 (or fp16) they run as an fp32 island (convert, compute, convert back). Padding is exact
// that way (it copies values; bf16 -> fp32 -> bf16 is lossless); a transposed convolution is
// computed more precisely than in bf16 (its bf16 dispatch is broken in 1.13: it checks the
// weight as a forward convolution's and refuses). On CUDA and in fp32 they are the plain calls.
#include <ATen/core/Tensor.h>

namespace framelift::infer {

// pads: {left, right, top, bottom}, as at::reflection_pad2d takes them.
at::Tensor reflect_pad2d(const at::Tensor& x, at::IntArrayRef pads);
at::Tensor replicate_pad2d(const at::Tensor& x, at::IntArrayRef pads);

// at::conv_transpose2d's arguments; `bias` may be undefined.
at::Tensor conv_transpose2d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, at::IntArrayRef stride,
                            at::IntArrayRef padding, at::IntArrayRef output_padding, int64_t groups, at::IntArrayRef dilation);

// at::upsample_bilinear2d. Its 1.13 CPU bf16 kernel is 7-8x slower than fp32's (36.7 vs 4.5 ms
// for 16 channels of 256x256 upscaled 2x); RIFE resizes its flow with it at every level.
at::Tensor upsample_bilinear2d(const at::Tensor& x, at::IntArrayRef size, bool align_corners, c10::optional<double> scale_h,
                               c10::optional<double> scale_w);

// Mish (x * tanh(softplus(x))), RealPLKSR's activation.
at::Tensor mish(const at::Tensor& x);

// at::layer_norm over the last axis (`shape` its size). Its 1.13 CPU bf16 kernel is 7-10x slower
// than fp32's (3.85 vs 0.56 ms for 128 channels of a 64x64 map, conversions included), and less
// precise: the island is faster and rounds once.
at::Tensor layer_norm(const at::Tensor& x, at::IntArrayRef shape, const at::Tensor& weight, const at::Tensor& bias, double eps);

// at::group_norm. Its 1.13 CPU bf16 kernel is wrong on channels-last input (what NativeModel
// feeds): 4 dB against fp32 on a 16-channel map, 44 dB on the same map contiguous.
at::Tensor group_norm(const at::Tensor& x, int64_t groups, const at::Tensor& weight, const at::Tensor& bias, double eps);

}  // namespace framelift::infer
