#pragma once
// Softmax splatting (Niklaus and Liu, CVPR 2020) as GMFSS uses it: forward warping, each source
// pixel pushed along its flow into the four pixels around where it lands, bilinearly weighted.
// Upstream's only implementation is a CUDA kernel (softsplat.py, through cupy); this one is written
// from that kernel's definition in ATen ops, so it runs on every device framelift does. The
// reference it is tested against is tests/data/arch/make_gmfss_references.py's, written from the
// same definition in Python (tests/models/gmfss_test.cpp).
#include <ATen/core/Tensor.h>

namespace framelift::models {

// input [N, C, H, W], flow [N, 2, H, W] (x then y, in pixels): out[n, c, y', x'] is the sum over
// the source pixels of input times the bilinear weight of (x', y') around (x + u, y + v). Targets
// outside the frame and non-finite flows are dropped. Computed in fp32; returns input's dtype.
at::Tensor splat_sum(const at::Tensor& input, const at::Tensor& flow);

// Upstream's softsplat(strMode="soft"): the sum of input * exp(metric) over the sum of exp(metric)
// (+ 1e-7). metric [N, 1, H, W].
at::Tensor softmax_splat(const at::Tensor& input, const at::Tensor& flow, const at::Tensor& metric);

// What GMFSS's fusion does with it: softmax_splat(input), divided again, where anything landed, by
// softmax_splat(ones): the 1e-7 taken back out (the plain weighted mean where weights landed, 0
// where none did). One splat does both (the ones' splat is the metric's own sum).
at::Tensor softmax_splat_renormalised(const at::Tensor& input, const at::Tensor& flow, const at::Tensor& metric);

}  // namespace framelift::models
