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

}  // namespace framelift::media
