#pragma once
// A video frame in host memory, as the library's Pipeline takes and gives it.
//
// Layout: planar RGB, float32, values in [0, 1], full range: rgb holds the red plane (height rows
// of width values), then green, then blue; 3 * width * height floats. This is the layout every
// stage works in, so no conversion is hidden in the API. An 8-bit code k is k / 255 exactly, the
// convention models are trained with (from_rgb24 and to_rgb24 convert that way).
//
// Ownership: a Frame owns its pixels (a std::vector); it is a plain value, movable and copyable.
// Thread-safety: none needed (a value).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace framelift {

struct Frame {
  int width = 0;
  int height = 0;
  // Presentation time in the time base given to Pipeline::configure (VideoShape::time_base_*).
  int64_t pts = 0;
  std::vector<float> rgb;  // 3 * width * height, planes R, G, B

  // Pixel (x, y) of plane c (0 red, 1 green, 2 blue). No bounds check.
  float at(int c, int x, int y) const { return rgb[(std::size_t(c) * height + y) * width + x]; }
};

// The most pixels a frame from from_rgb24 may have: 16384 x 16384 (3 GiB of floats), the largest
// frame a stage makes (resize's limit).
inline constexpr int64_t kMaxFramePixels = int64_t(16384) * 16384;

// From packed 8-bit RGB (3 bytes a pixel, rows `stride` bytes apart): code k becomes k / 255.
// Throws framelift::Error(Usage) for a non-positive size or a stride below 3 * width, and
// Error(Resource) for a size over kMaxFramePixels (whatever the product's overflow; nothing is
// allocated or read then) or a frame the process has no memory for.
Frame from_rgb24(const uint8_t* pixels, int width, int height, int stride, int64_t pts);

// To packed 8-bit RGB: round(v * 255), v clamped to [0, 1]. `out` holds height rows of `stride`
// bytes (stride >= 3 * width). Throws framelift::Error(Usage) for a frame whose rgb has the
// wrong size.
void to_rgb24(const Frame& frame, uint8_t* out, int stride);

}  // namespace framelift
