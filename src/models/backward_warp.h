#pragma once
// Backward warping, as RIFE uses it: every output pixel samples the image at its own position
// plus the flow (in pixels), bilinearly, clamping samples to the border. This is ncnn's custom
// rife.Warp layer and Practical-RIFE's warp() (grid_sample, align_corners=True, border padding).
//
// The sampling grid is built and used in fp32 whatever the image's precision: in fp16 the grid
// coordinates lose whole pixels beyond ~2000 px, which shows as corrupted pixels on 4K frames.
#include <ATen/core/Tensor.h>

namespace framelift::models {

// image [N, C, H, W], flow [N, 2, H, W] (x then y displacement). Returns the image's dtype.
at::Tensor backward_warp(const at::Tensor& image, const at::Tensor& flow);

// Bilinear resize by a factor, as F.interpolate(scale_factor=f, mode="bilinear") does it (sizes
// floored, the factor itself used for the sampling positions): how the flow networks (RIFE,
// IFRNet) move flows and frames between pyramid levels. x unchanged for a factor of 1.
at::Tensor resize_bilinear(const at::Tensor& x, double factor);

}  // namespace framelift::models
