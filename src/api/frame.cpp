#include "framelift/frame.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "framelift/error.h"
#include "util/str.h"

namespace framelift {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// In floating point: 12 bytes a pixel overflows int64 (and size_t) for the largest int sizes.
double frame_gib(int width, int height) { return double(width) * double(height) * 3 * sizeof(float) / kGiB; }

// Refused before anything is allocated or read: a wrong size must not turn into std::bad_alloc,
// or into an allocation so large that the OOM killer ends the process instead.
void check_frame_size(const char* caller, int width, int height) {
  if (width <= 0 || height <= 0) throw Error(ErrorKind::Usage, str(caller, ": size ", width, "x", height));
  if (int64_t(width) * height > kMaxFramePixels)  // both factors below 2^31: no overflow
    throw Error(ErrorKind::Resource, str(caller, ": a ", width, "x", height, " frame needs ", frame_gib(width, height),
                                         " GiB; frames are limited to ", kMaxFramePixels, " pixels (16384x16384)"));
}

std::vector<float> frame_planes(const char* caller, int width, int height) {
  try {
    return std::vector<float>(size_t(3) * width * height);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::Resource, str(caller, ": out of memory for a ", width, "x", height, " frame (",
                                         frame_gib(width, height), " GiB)"));
  }
}

}  // namespace

Frame from_rgb24(const uint8_t* pixels, int width, int height, int stride, int64_t pts) {
  check_frame_size("from_rgb24", width, height);
  if (stride < 3 * int64_t(width)) throw Error(ErrorKind::Usage, str("from_rgb24: stride ", stride, " below 3 x width ", width));
  Frame f{width, height, pts, frame_planes("from_rgb24", width, height)};
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
  if (stride < 3 * int64_t(f.width))
    throw Error(ErrorKind::Usage, str("to_rgb24: stride ", stride, " below 3 x width ", f.width));
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
