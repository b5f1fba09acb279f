#include "pipeline/temporal_window.h"

#include <algorithm>

#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {

TemporalWindow::TemporalWindow(int size) : size_(size), half_(size / 2) {
  if (size < 1 || size % 2 == 0)
    throw Error(ErrorKind::Usage, str("window=", size, " must be an odd number of frames (1, 3, 5, ...): the window is centred on its frame"));
}

std::vector<TemporalWindow::Window> TemporalWindow::push(Frame frame) {
  kept_.push_back(std::move(frame));
  ++count_;
  std::vector<Window> done;
  if (next_centre_ + half_ < count_) done.push_back(window_at(next_centre_++));
  // Frames older than the next window's first neighbour are never needed again.
  while (first_ < next_centre_ - half_) {
    kept_.pop_front();
    ++first_;
  }
  return done;
}

std::vector<TemporalWindow::Window> TemporalWindow::flush() {
  std::vector<Window> done;
  while (next_centre_ < count_) done.push_back(window_at(next_centre_++));
  kept_.clear();
  first_ = count_;
  return done;
}

TemporalWindow::Window TemporalWindow::window_at(int64_t centre) const {
  Window w;
  w.frames.reserve(size_t(size_));
  for (int64_t i = centre - half_; i <= centre + half_; ++i) {
    // The clip's edge frame stands in for neighbours before its start or after its end.
    const int64_t index = std::clamp<int64_t>(i, 0, count_ - 1);
    w.frames.push_back(kept_.at(size_t(index - first_)).image);
  }
  w.pts = kept_.at(size_t(centre - first_)).pts;
  return w;
}

void TemporalWindow::reset() {
  kept_.clear();
  first_ = count_ = next_centre_ = 0;
}

}  // namespace framelift::pipeline
