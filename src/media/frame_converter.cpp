#include "media/frame_converter.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "media/av_error.h"
#include "media/color_sws.h"
#include "util/str.h"

namespace framelift::media {

FramePtr FrameConverter::convert(FramePtr frame) {
  if (frame->format == target_) return frame;
  if (!sws_ || frame->width != width_ || frame->height != height_ || frame->format != format_) {
    VideoFormat vf = VideoFormat::of_frame(frame.get(), {1, 1}, {0, 1});
    sws_ = make_color_sws(frame->width, frame->height, AVPixelFormat(frame->format), target_, effective_matrix(vf),
                          is_full_range(AVPixelFormat(frame->format), frame->color_range),
                          is_full_range(target_, frame->color_range),
                          SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, ErrorKind::Usage);
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
