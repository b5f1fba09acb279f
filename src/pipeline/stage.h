#pragma once
// A processing step between decode and encode (resize, upscale, interpolate, denoise, ...).
//
// Life cycle: configure() once with the format of the frames it will get, returning the format
// it produces; then push() for every frame in presentation order; then flush() once at the end.
// A stage emits zero or more frames per push (interpolation emits several, a temporal model may
// emit none until it has its window). Stages run on one thread; they need not be thread-safe.
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "media/video_format.h"
#include "pipeline/frame.h"

namespace framelift::pipeline {

class Stage {
 public:
  using Emit = std::function<void(Frame)>;
  virtual ~Stage() = default;
  virtual std::string name() const = 0;
  virtual media::VideoFormat configure(const media::VideoFormat& input) = 0;
  virtual void push(Frame frame, const Emit& emit) = 0;
  virtual void flush(const Emit& emit) {}
  // Input frames the stage needs on each side of a stretch to produce that stretch's output
  // exactly as in one uninterrupted run (interpolation: the neighbour it blends with). A job's
  // segment is fed this much more, and what those frames produce outside it is dropped.
  virtual int context_frames() const { return 0; }
};

}  // namespace framelift::pipeline
