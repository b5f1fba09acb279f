#include "media/color_conversion.h"

#include "util/error.h"
#include "util/str.h"

namespace framelift::media {

ColorConversion parse_color_conversion(const std::string& text) {
  if (text == "auto") return ColorConversion::Auto;
  if (text == "swscale") return ColorConversion::Swscale;
  if (text == "tensor") return ColorConversion::Tensor;
  throw Error(ErrorKind::Usage, str("--color-conversion: expected auto, swscale or tensor, got '", text, "'"));
}

std::string color_conversion_name(ColorConversion c) {
  switch (c) {
    case ColorConversion::Swscale: return "swscale";
    case ColorConversion::Tensor: return "tensor";
    case ColorConversion::Auto: break;
  }
  return "auto";
}

}  // namespace framelift::media
