#include "run/input_window.h"

#include <algorithm>

namespace framelift::pipeline {

InputWindow whole_input(int64_t max_frames) {
  InputWindow w;
  w.max_frames = max_frames;
  return w;
}

InputWindow segment_input(const jobs::SegmentPlan& plan, int index, int context, bool seek, int64_t max_frames) {
  InputWindow w;
  w.video_only = true;  // assembling adds the other streams from the source
  w.exact = true;
  w.segment_index = index;
  if (plan.segments.size() <= 1) {
    w.max_frames = max_frames;
    return w;
  }
  const jobs::Segment& seg = plan.segments.at(size_t(index));
  const int64_t n = plan.total_frames();
  Stretch& s = w.stretches.front();
  s.from = plan.frame_pts[size_t(std::max<int64_t>(0, seg.first_frame - context))];
  s.to = plan.frame_pts[size_t(std::min<int64_t>(n - 1, seg.first_frame + seg.frames - 1 + context))];
  if (seek && index > 0) s.seek = plan.keyframe_at_or_before(s.from);
  w.keep_from = index == 0 ? INT64_MIN : plan.start_pts(size_t(index));
  w.keep_to = plan.start_pts(size_t(index) + 1);
  if (!plan.frame_pts.empty()) w.origin_pts = plan.frame_pts.front();
  return w;
}

InputWindow sample_input(const std::vector<Stretch>& stretches, int64_t max_frames) {
  InputWindow w;
  w.stretches = stretches;
  // The first stretch from the start needs no seek; later ones always seek back to their keyframe.
  if (!w.stretches.empty() && w.stretches.front().seek <= 0) w.stretches.front().seek = AV_NOPTS_VALUE;
  if (!w.stretches.empty()) w.origin_pts = w.stretches.front().from;
  w.video_only = true;
  w.max_frames = max_frames;
  return w;
}

}  // namespace framelift::pipeline
