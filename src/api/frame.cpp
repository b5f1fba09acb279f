#include "framelift/frame.h"

#include <algorithm>
#include <cmath>

#include "framelift/error.h"
#include "util/str.h"

namespace framelift {

Frame from_rgb24(const uint8_t* pixels, int width, int height, int stride, int64_t pts) {
  if (width <= 0 || height <= 0) throw Error(ErrorKind::Usage, str("from_rgb24: size ", width, "x", height));
  if (stride < 3 * width) throw Error(ErrorKind::Usage, str("from_rgb24: stride ", stride, " below 3 x width ", width));
  Frame f{width, height, pts, std::vector<float>(size_t(3) * width * height)};
  const size_t plane = size_t(width) * height;
  for (int y = 0; y < height; ++y) {
    const uint8_t* row = pixels + size_t(y) * stride;
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c) f.rgb[c * plane + size_t(y) * width + x] = float(row[3 * x + c]) / 255.0f;
  }
  return f;
}

void to_rgb24(const Frame& f, uint8_t* out, int stride) {
  const size_t plane = size_t(f.width) * f.height;
  if (f.width <= 0 || f.height <= 0 || f.rgb.size() != 3 * plane)
    throw Error(ErrorKind::Usage, str("to_rgb24: a ", f.width, "x", f.height, " frame holds ", f.rgb.size(), " values"));
  if (stride < 3 * f.width) throw Error(ErrorKind::Usage, str("to_rgb24: stride ", stride, " below 3 x width ", f.width));
  for (int y = 0; y < f.height; ++y) {
    uint8_t* row = out + size_t(y) * stride;
    for (int x = 0; x < f.width; ++x)
      for (int c = 0; c < 3; ++c) {
        const float v = std::clamp(f.rgb[c * plane + size_t(y) * f.width + x], 0.0f, 1.0f);
        row[3 * x + c] = uint8_t(std::lround(v * 255.0f));
      }
  }
}

}  // namespace framelift
