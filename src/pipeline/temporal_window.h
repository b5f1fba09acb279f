#pragma once
// The frames a temporal model sees for each output frame: `size` (odd) consecutive input frames
// centred on it, oldest first. Where the clip has no neighbour (its first and last size/2
// frames), the edge frame stands in for the missing ones: with size 3, output 0 sees
// (f0, f0, f1) and the last output sees (f[n-2], f[n-1], f[n-1]). Every input frame gives exactly
// one window, carrying that frame's timestamp, so a temporal stage keeps the frame count and the
// timing. A window is complete once its last neighbour has arrived (size/2 frames of delay);
// flush() completes the rest.
//
// Only the frames some future window needs are kept. size 1 passes each frame through as is.
#include <cstdint>
#include <deque>
#include <vector>

#include "pipeline/frame.h"

namespace framelift::pipeline {

class TemporalWindow {
 public:
  struct Window {
    std::vector<at::Tensor> frames;  // `size` images, oldest first
    int64_t pts = 0;                 // the centre frame's
  };

  // Throws Error(Usage) for an even or non-positive size.
  explicit TemporalWindow(int size);

  // Adds the next frame (presentation order); returns the windows it completes (zero or one).
  std::vector<Window> push(Frame frame);
  // At the end of the clip: the windows still waiting, their missing neighbours repeated.
  std::vector<Window> flush();

  int size() const { return size_; }
  // Forgets every frame: the next push() is a clip's first frame.
  void reset();

 private:
  Window window_at(int64_t centre) const;

  int size_;
  int half_;
  std::deque<Frame> kept_;   // frames from index first_ on
  int64_t first_ = 0;        // index of kept_.front() in the clip
  int64_t count_ = 0;        // frames pushed so far
  int64_t next_centre_ = 0;  // the next window to complete
};

}  // namespace framelift::pipeline
