#include "media/video_format.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

namespace framelift::media {

VideoFormat VideoFormat::of_frame(const AVFrame* f, AVRational time_base, AVRational frame_rate) {
  VideoFormat v;
  v.width = f->width;
  v.height = f->height;
  v.pix_fmt = AVPixelFormat(f->format);
  v.time_base = time_base;
  v.frame_rate = frame_rate;
  v.sample_aspect = f->sample_aspect_ratio;
  v.primaries = f->color_primaries;
  v.transfer = f->color_trc;
  v.matrix = f->colorspace;
  v.range = f->color_range;
  v.chroma_location = f->chroma_location;
  // A frame flagged progressive may only mean the decoder does not flag fields: unknown, not progressive.
  if (f->interlaced_frame) v.field_order = f->top_field_first ? AV_FIELD_TT : AV_FIELD_BB;
  return v;
}

int VideoFormat::bit_depth() const {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(pix_fmt);
  return d ? d->comp[0].depth : 8;
}

AVColorSpace effective_matrix(const VideoFormat& format) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(format.pix_fmt);
  if (d && (d->flags & AV_PIX_FMT_FLAG_RGB)) return AVCOL_SPC_RGB;
  if (format.matrix != AVCOL_SPC_UNSPECIFIED && format.matrix != AVCOL_SPC_RESERVED) return format.matrix;
  return format.height >= 720 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M;
}

bool is_full_range(AVPixelFormat fmt, AVColorRange range) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(fmt);
  if (d && (d->flags & AV_PIX_FMT_FLAG_RGB)) return true;
  switch (fmt) {
    case AV_PIX_FMT_YUVJ420P: case AV_PIX_FMT_YUVJ422P: case AV_PIX_FMT_YUVJ444P: case AV_PIX_FMT_YUVJ440P:
      return true;
    default:
      return range == AVCOL_RANGE_JPEG;
  }
}

}  // namespace framelift::media
