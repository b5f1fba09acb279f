#include "media/frame_converter.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "media/av_error.h"
#include "util/str.h"

namespace framelift::media {

FramePtr FrameConverter::convert(FramePtr frame) {
  if (frame->format == target_) return frame;
  if (!sws_ || frame->width != width_ || frame->height != height_ || frame->format != format_) {
    sws_.reset(sws_getContext(frame->width, frame->height, AVPixelFormat(frame->format), frame->width,
                              frame->height, target_, SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT,
                              nullptr, nullptr, nullptr));
    if (!sws_)
      throw Error(ErrorKind::Usage, str("cannot convert ", av_get_pix_fmt_name(AVPixelFormat(frame->format)),
                                        " to ", av_get_pix_fmt_name(target_)));
    VideoFormat vf = VideoFormat::of_frame(frame.get(), {1, 1}, {0, 1});
    const int* coeffs = sws_getCoefficients(effective_matrix(vf));
    sws_setColorspaceDetails(sws_.get(), coeffs, is_full_range(AVPixelFormat(frame->format), frame->color_range),
                             coeffs, is_full_range(target_, frame->color_range), 0, 1 << 16, 1 << 16);
    width_ = frame->width;
    height_ = frame->height;
    format_ = frame->format;
  }
  FramePtr out = make_frame();
  out->width = frame->width;
  out->height = frame->height;
  out->format = target_;
  check(av_frame_get_buffer(out.get(), 0), ErrorKind::Resource, "allocating a frame");
  check(av_frame_copy_props(out.get(), frame.get()), ErrorKind::Resource, "copying frame properties");
  sws_scale(sws_.get(), frame->data, frame->linesize, 0, frame->height, out->data, out->linesize);
  return out;
}

}  // namespace framelift::media
