#include "pipeline/face_tracks.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

constexpr double kSameFace = 0.3;

// The detection of `frame` overlapping `box` most, if any does at kSameFace or more.
const models::DetectedFace* best_match(const std::vector<models::DetectedFace>& frame, const std::array<float, 4>& box) {
  const models::DetectedFace* best = nullptr;
  double best_iou = kSameFace;
  for (const models::DetectedFace& d : frame) {
    const double iou = box_iou(d.box, box);
    if (iou >= best_iou) best = &d, best_iou = iou;
  }
  return best;
}

}  // namespace

double box_iou(const std::array<float, 4>& a, const std::array<float, 4>& b) {
  const double w = std::max(0.0, double(std::min(a[2], b[2])) - std::max(a[0], b[0]));
  const double h = std::max(0.0, double(std::min(a[3], b[3])) - std::max(a[1], b[1]));
  const double inter = w * h;
  const double area_a = std::max(0.0, double(a[2] - a[0])) * std::max(0.0, double(a[3] - a[1]));
  const double area_b = std::max(0.0, double(b[2] - b[0])) * std::max(0.0, double(b[3] - b[1]));
  const double uni = area_a + area_b - inter;
  return uni > 0 ? inter / uni : 0.0;
}

std::vector<models::DetectedFace> in_frame_pixels(std::vector<models::DetectedFace> faces, double scale, double min_eye_distance) {
  std::erase_if(faces, [&](models::DetectedFace& f) {
    for (float& v : f.box) v = float(v * scale);
    for (float& v : f.landmarks) v = float(v * scale);
    return std::hypot(f.landmarks[0] - f.landmarks[2], f.landmarks[1] - f.landmarks[3]) < min_eye_distance;
  });
  return faces;
}

FaceTracks::FaceTracks(int hold, int smooth) : hold_(hold), smooth_(smooth) {
  if (hold < 0) throw Error(ErrorKind::Usage, str("face tracks: hold=", hold, " must be 0 or more"));
  if (smooth < 1) throw Error(ErrorKind::Usage, str("face tracks: smooth=", smooth, " must be 1 or more"));
}

int FaceTracks::memory() const { return std::max(hold_, smooth_ - 1); }

std::vector<models::DetectedFace> FaceTracks::next(std::vector<models::DetectedFace> detections) {
  std::vector<models::DetectedFace> faces = detections;
  for (int m = 0; m < hold_ && m < int(history_.size()); ++m)
    for (const models::DetectedFace& d : history_[size_t(m)]) {
      const bool covered = std::any_of(faces.begin(), faces.end(), [&](const models::DetectedFace& f) { return box_iou(f.box, d.box) >= kSameFace; });
      if (!covered) faces.push_back(d);
    }
  // Smoothed copies: the matches are looked up against the faces as detected, not as smoothed.
  std::vector<models::DetectedFace> smoothed = faces;
  for (size_t i = 0; i < faces.size(); ++i) {
    int count = 1;
    for (int m = 0; m + 1 < smooth_ && m < int(history_.size()); ++m) {
      const models::DetectedFace* match = best_match(history_[size_t(m)], faces[i].box);
      if (!match) continue;
      for (size_t k = 0; k < smoothed[i].landmarks.size(); ++k) smoothed[i].landmarks[k] += match->landmarks[k];
      ++count;
    }
    for (float& v : smoothed[i].landmarks) v /= float(count);
  }
  history_.push_front(std::move(detections));
  while (int(history_.size()) > memory()) history_.pop_back();
  return smoothed;
}

}  // namespace framelift::pipeline
