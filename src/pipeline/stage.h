#pragma once
// A processing step between decode and encode (resize, upscale, interpolate, denoise, ...).
//
// Life cycle: configure() once with the format of the frames it will get, returning the format
// it produces; then push() for every frame in presentation order; then flush() once at the end.
// A stage may be used again for another stretch of video (a job worker's next segment): reset(),
// then the same life cycle. What is expensive (weights, the memory probe, CUDA graphs) stays.
// A stage emits zero or more frames per push (interpolation emits several, a temporal model may
// emit none until it has its window). Stages run on one thread; they need not be thread-safe.
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "media/video_format.h"
#include "pipeline/frame.h"

namespace framelift::media {
class FilterGraph;
}

namespace framelift::pipeline {

class Stage {
 public:
  using Emit = std::function<void(Frame)>;
  virtual ~Stage() = default;
  virtual std::string name() const = 0;
  virtual media::VideoFormat configure(const media::VideoFormat& input) = 0;
  virtual void push(Frame frame, const Emit& emit) = 0;
  virtual void flush(const Emit& emit) {}
  // Forgets the stretch it was given (frames held for context, timestamps seen, counters), so the
  // next configure() starts as on a new stage; keeps the model and whatever was planned from it.
  // Called between runs only, never between configure() and flush().
  virtual void reset() {}
  // Input frames the stage needs on each side of a stretch to produce that stretch's output
  // exactly as in one uninterrupted run (interpolation: the neighbour it blends with). A job's
  // segment is fed this much more, and what those frames produce outside it is dropped.
  virtual int context_frames() const { return 0; }
  // A stage that does better on the decoded frames than on RGB (deinterlace: the two fields of
  // 4:2:0 chroma are only apart before the conversion) may offer, after configure(), a filter
  // graph taking the decoded frames in their own format and time base. When it is the first stage
  // the runner sends the decoded frames through that graph instead of calling its push() and
  // flush(), and converts what comes out for the next stage. Anywhere else it is not used.
  virtual media::FilterGraph* decoded_frame_graph() { return nullptr; }
  // Where the stage computes, known after configure(). A stage on a GPU gets and emits frames in
  // device memory: the runner converts decoded frames there (infer/yuv_tensor.h) and moves a
  // frame back to host memory only for a stage on the CPU or for encoding, so a chain of GPU
  // stages does not round-trip each frame through the host.
  virtual c10::Device device() const { return c10::kCPU; }
};

}  // namespace framelift::pipeline
