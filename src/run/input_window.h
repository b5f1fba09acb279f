#pragma once
// What part of the input one run reads, and which of its output is the run's: the one difference
// between a whole run, a job's segment and a profile sample. The FrameReader (frame_reader.h)
// reads every kind the same way; only the window differs.
//
//   whole run       one stretch over everything; all output kept; other streams copied
//   job segment     one stretch: the segment plus the context frames its stages ask for, from the
//                   keyframe before it; output kept only inside the segment; video only
//   profile sample  several stretches, each from its own keyframe, joined as if one video (each
//                   one's timestamps follow the previous one's last frame); video only
#include <climits>
#include <cstdint>
#include <vector>

extern "C" {
#include <libavutil/avutil.h>
}

#include "jobs/segment_plan.h"

namespace framelift::pipeline {

// One stretch of input timestamps (the video stream's time base): decoding starts at the keyframe
// `seek` (AV_NOPTS_VALUE: where the reader stands, the start for the first stretch), the frames
// from `from` to `to` (inclusive) go to the stages.
struct Stretch {
  int64_t seek = AV_NOPTS_VALUE;
  int64_t from = INT64_MIN, to = INT64_MAX;
};

struct InputWindow {
  std::vector<Stretch> stretches{Stretch{}};
  // Output times (input time base) that belong to this run; the rest comes from context frames.
  int64_t keep_from = INT64_MIN, keep_to = INT64_MAX;
  // Where retiming stages lay their grid: the video's first frame, wherever this run starts.
  // AV_NOPTS_VALUE: the first decoded frame's time (0 when it has none).
  int64_t origin_pts = AV_NOPTS_VALUE;
  // The other streams (audio, subtitles, ...) do not fit a part of the video: not copied.
  bool video_only = false;
  // Stop after this many frames (0: no limit); a segment of a planned job has its frames already.
  int64_t max_frames = 0;
  // A seek that lands after the first stretch's start is an error (a segment must be exact), and
  // the run may make no frames (a segment inside a select filter's cut).
  bool exact = false;
  int segment_index = -1;  // for messages; -1: not a segment

  bool keeps(int64_t pts) const { return pts >= keep_from && pts < keep_to; }
};

// The whole input, up to max_frames (0: all).
InputWindow whole_input(int64_t max_frames);

// Segment `index` of `plan` with `context` frames on each side (Stage::context_frames). seek
// false: decode from the start (for inputs whose seeks land late). A plan of one segment, or one
// whose timestamps cannot place frames, reads everything, up to max_frames.
InputWindow segment_input(const jobs::SegmentPlan& plan, int index, int context, bool seek, int64_t max_frames);

// A profile sample's stretches (seek, from, to) in order, up to max_frames in all.
InputWindow sample_input(const std::vector<Stretch>& stretches, int64_t max_frames);

}  // namespace framelift::pipeline
