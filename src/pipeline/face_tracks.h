#pragma once
// Which faces a frame restores, from the detections of that frame and a few before it, so that a
// face is not restored on one frame and skipped on the next, and its crop does not jitter:
//   - hold: a face detected on one of the `hold` frames before this one, and not on this one (no
//     detection here overlaps it at IoU >= 0.3), is restored here too, where it was last seen:
//     a blink, a turn or motion blur that drops the detector's score below its threshold for a
//     frame or two no longer switches the restoration off and on;
//   - smooth: each face's landmarks are the mean of its own and those of the best-overlapping
//     detection (IoU >= 0.3) on each of the smooth - 1 frames before, so the aligned crop (and the
//     restored face) does not shake with the detector's pixel noise.
// The result depends on the last max(hold, smooth - 1) frames' detections only, never on older
// ones: a job's segment that starts with that many frames of context restores exactly what a
// pass does.
#include <cstdint>
#include <deque>
#include <vector>

#include "models/face_detector.h"

namespace framelift::pipeline {

double box_iou(const std::array<float, 4>& a, const std::array<float, 4>& b);

// Detections made on a copy of the frame scaled by 1 / scale, in the frame's pixels, without the
// faces whose eyes are less than min_eye_distance px apart there (too small to restore: upstream
// skips them at 5 px).
std::vector<models::DetectedFace> in_frame_pixels(std::vector<models::DetectedFace> faces, double scale, double min_eye_distance);

class FaceTracks {
 public:
  FaceTracks(int hold, int smooth);

  // This frame's detections in; the faces to restore on it out (this frame's detections first,
  // in their order, then the held ones, most recent first).
  std::vector<models::DetectedFace> next(std::vector<models::DetectedFace> detections);
  // Forgets every frame: the next call is a clip's first frame.
  void reset() { history_.clear(); }
  // How many frames before one this one's faces depend on.
  int memory() const;

 private:
  int hold_, smooth_;
  std::deque<std::vector<models::DetectedFace>> history_;  // most recent first, at most memory()
};

}  // namespace framelift::pipeline
