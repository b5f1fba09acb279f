#pragma once
// A network followed by a bicubic resize of its output: how realesr-animevideov3-x2 and -x3 are
// shipped (their ncnn exports are the x4 Compact network, then a bicubic Interp down to 2x or
// 3x). Run natively, the network is the native architecture and the resize is this wrapper's,
// with ncnn's Interp semantics (bicubic, A = -0.75, half-pixel centres, edges clamped: PyTorch's
// upsample_bicubic2d with align_corners false).
#include <memory>

#include "infer/image_model.h"

namespace framelift::models {

// `net`'s output, resized to `scale` times the input. Takes ownership of net.
std::unique_ptr<ImageModel> resized_model(std::unique_ptr<ImageModel> net, int scale);

}  // namespace framelift::models
