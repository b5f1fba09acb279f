#pragma once
// The one way framelift builds a same-size swscale conversion between pixel formats: the YUV
// matrix is the stream's (effective_matrix when unspecified) and each side's range is given,
// so every conversion in the pipeline agrees on color.
#include "media/av_ptr.h"
#include "util/error.h"

namespace framelift::media {

// Throws Error(kind) naming both formats when swscale cannot convert them.
SwsPtr make_color_sws(int width, int height, AVPixelFormat src, AVPixelFormat dst, AVColorSpace matrix,
                      bool src_full_range, bool dst_full_range, int flags, ErrorKind kind);

// The float swscale gives for nominal white (Y at its peak code, neutral chroma) of a YUV or gray
// format converted to GBRPF32: 1 by the book, but FFmpeg 5.1 gives (2^16 - 2^(16-bits)) / 65535
// for full range and 65283/65535 for limited range, i.e. about k/256 for an 8-bit code k.
// swscale's float conversion is linear in both directions with this same factor (measured at
// every code of 8- and 10-bit, full and limited range; docs/frame-layout.md), so dividing by it
// on the way in and multiplying by it on the way out makes the conversion exact to the codes.
// Measured once per call on a tiny frame with the same flags, so another FFmpeg version that
// fixed or changed the factor is followed. Returns 1 for formats where the measurement does not
// look like a scale (black not at 0, or white not within 2% of 1): those are left as swscale
// gives them. Thread-safe (no shared state).
double swscale_float_white(AVPixelFormat yuv_or_gray, AVColorSpace matrix, bool full_range, int flags);

}  // namespace framelift::media
