#include "media/color_sws.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "util/str.h"

namespace framelift::media {

SwsPtr make_color_sws(int w, int h, AVPixelFormat src, AVPixelFormat dst, AVColorSpace matrix, bool src_full,
                      bool dst_full, int flags, ErrorKind kind) {
  SwsPtr sws(sws_getContext(w, h, src, w, h, dst, flags, nullptr, nullptr, nullptr));
  if (!sws)
    throw Error(kind, str("cannot convert ", av_get_pix_fmt_name(src), " to ", av_get_pix_fmt_name(dst), " at ", w,
                          "x", h));
  const int* coeffs = sws_getCoefficients(matrix);
  sws_setColorspaceDetails(sws.get(), coeffs, src_full ? 1 : 0, coeffs, dst_full ? 1 : 0, 0, 1 << 16, 1 << 16);
  return sws;
}

}  // namespace framelift::media
