#pragma once
// Where YUV<->RGB happens. Auto: with tensor ops on the device of the stage at that end of the
// chain when it is a GPU (infer/yuv_tensor.h; only the 8- or 10-bit planes cross the bus), else
// with swscale. Tensor: the tensor ops wherever the stage is, the CPU included (how that path is
// tested without a GPU). Swscale: never the tensor ops. Formats the tensor ops do not take
// (RGB, alpha, YCgCo...) always go through swscale.
#include <string>

namespace framelift::media {

enum class ColorConversion { Auto, Swscale, Tensor };

// "auto", "swscale", "tensor"; throws Error(Usage) naming --color-conversion otherwise.
ColorConversion parse_color_conversion(const std::string& text);
std::string color_conversion_name(ColorConversion c);

}  // namespace framelift::media
