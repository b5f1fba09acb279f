#include "media/color_sws.h"

#include <cmath>
#include <cstring>

extern "C" {
#include <libavutil/imgutils.h>
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

namespace {

constexpr int kProbeW = 8, kProbeH = 4;  // a multiple of every chroma subsampling

struct ImageBuffer {
  uint8_t* data[4] = {};
  int linesize[4] = {};
  ImageBuffer(int w, int h, AVPixelFormat f) {
    const int size = av_image_alloc(data, linesize, w, h, f, 64);
    // av_write_image_line2 ORs sub-byte and 8-bit components into place: start from zeros.
    if (size < 0) data[0] = nullptr;
    else std::memset(data[0], 0, size_t(size));
  }
  ~ImageBuffer() { av_freep(&data[0]); }
  ImageBuffer(const ImageBuffer&) = delete;
  ImageBuffer& operator=(const ImageBuffer&) = delete;
};

// The red plane's first float after converting a flat frame (luma `y`, neutral chroma), or NaN.
float flat_frame_to_float(AVPixelFormat f, const AVPixFmtDescriptor* d, AVColorSpace matrix, bool full, int flags,
                          unsigned y) {
  ImageBuffer in(kProbeW, kProbeH, f), out(kProbeW, kProbeH, AV_PIX_FMT_GBRPF32);
  if (!in.data[0] || !out.data[0]) return NAN;
  const int depth = d->comp[0].depth;
  uint16_t row[kProbeW];
  for (int c = 0; c < d->nb_components; ++c) {
    const bool alpha = (d->flags & AV_PIX_FMT_FLAG_ALPHA) && c == d->nb_components - 1;
    const unsigned value = c == 0 ? y : alpha ? (1u << depth) - 1 : 1u << (depth - 1);
    const int cw = c == 1 || c == 2 ? AV_CEIL_RSHIFT(kProbeW, d->log2_chroma_w) : kProbeW;
    const int ch = c == 1 || c == 2 ? AV_CEIL_RSHIFT(kProbeH, d->log2_chroma_h) : kProbeH;
    for (int i = 0; i < cw; ++i) row[i] = uint16_t(value);
    for (int r = 0; r < ch; ++r) av_write_image_line2(row, in.data, in.linesize, d, 0, r, c, cw, 2);
  }
  SwsPtr sws(sws_getContext(kProbeW, kProbeH, f, kProbeW, kProbeH, AV_PIX_FMT_GBRPF32, flags, nullptr, nullptr,
                            nullptr));
  if (!sws) return NAN;
  const int* coeffs = sws_getCoefficients(matrix);
  sws_setColorspaceDetails(sws.get(), coeffs, full ? 1 : 0, coeffs, 1, 0, 1 << 16, 1 << 16);
  sws_scale(sws.get(), in.data, in.linesize, 0, kProbeH, out.data, out.linesize);
  return reinterpret_cast<const float*>(out.data[2])[0];
}

}  // namespace

double swscale_float_white(AVPixelFormat f, AVColorSpace matrix, bool full, int flags) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(f);
  constexpr uint64_t not_yuv = AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_FLOAT |
                               AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BAYER;
  if (!d || (d->flags & not_yuv) || d->comp[0].depth < 8 || d->comp[0].depth > 16) return 1.0;
  const int depth = d->comp[0].depth;
  const unsigned black = full ? 0u : 16u << (depth - 8), white = full ? (1u << depth) - 1 : 235u << (depth - 8);
  const float b = flat_frame_to_float(f, d, matrix, full, flags, black);
  const float w = flat_frame_to_float(f, d, matrix, full, flags, white);
  if (!(std::fabs(b) < 1e-5f) || !(std::fabs(w - 1.0f) < 0.02f)) return 1.0;
  return double(w);
}

}  // namespace framelift::media
