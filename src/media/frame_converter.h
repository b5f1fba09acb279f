#pragma once
// Converts frames to another pixel format at the same size (pass-through runs whose encoder does
// not take the decoded format). Keeps its swscale context between frames.
#include "media/av_ptr.h"
#include "media/video_format.h"

namespace framelift::media {

class FrameConverter {
 public:
  explicit FrameConverter(AVPixelFormat target) : target_(target) {}
  // Returns `frame` itself when it already has the target format.
  FramePtr convert(FramePtr frame);

 private:
  AVPixelFormat target_;
  SwsPtr sws_;
  int width_ = 0, height_ = 0, format_ = -1;
};

}  // namespace framelift::media
