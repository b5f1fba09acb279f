#pragma once
// How a job's input is cut into segments: independent slices of the output, each processed,
// encoded (starting with a keyframe) and stored on its own, so that a stopped job loses at most
// the segment in flight and several workers can share the work.
//
// Segments are defined by input timestamps, not by decode order: segment i holds the output
// frames whose time falls in [start of segment i, start of segment i+1). Boundaries move to an
// input keyframe when one is near, so that decoding a segment starts with little waste.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

extern "C" {
#include <libavutil/rational.h>
}

namespace framelift::jobs {

struct Segment {
  int index = 0;
  int64_t first_frame = 0;  // index into SegmentPlan::frame_pts
  int64_t frames = 0;       // input frames in the segment
};

struct SegmentPlan {
  AVRational time_base{1, 1};          // of the input video stream
  std::vector<int64_t> frame_pts;      // every input frame's timestamp, in presentation order
  std::vector<int64_t> keyframe_pts;   // sorted
  std::vector<Segment> segments;
  // Bytes of the input's other streams (audio, subtitles, attachments): what assembly copies into
  // the output besides the segments' video. 0 in plans written before it was counted.
  int64_t other_stream_bytes = 0;
  // Packets of each other stream (input stream index -> count), as reading the whole input found
  // them: assembly reads them again and refuses an input that yields others (jobs/assemble.h).
  // nullopt in plans written before they were counted.
  std::optional<std::map<int, int64_t>> other_packets;

  int64_t total_frames() const { return int64_t(frame_pts.size()); }
  // Timestamp of the first frame of segment i (for i == size(): no end, INT64_MAX).
  int64_t start_pts(size_t i) const;
  // The latest keyframe at or before `pts` (the first frame when there is none).
  int64_t keyframe_at_or_before(int64_t pts) const;
};

// Reads the input's video packets (no decoding) and cuts the frames into segments of about
// `segment_frames` (<= 0: about 10 s of video; moved to a keyframe within a quarter segment when there is one). An input
// whose timestamps are missing, repeat or go back (re-timed by the demuxer) gets one segment: its
// frames cannot be located by time.
// `max_frames` > 0 keeps only the first frames (a sample job). Throws Error(Input), also for a
// stream that starts mid-file (an MPEG-TS whose program gains a stream later): its packets come
// without the stream parameters an output needs, and would be lost.
SegmentPlan plan_segments(const std::string& input, int64_t segment_frames, int64_t max_frames = 0);
// A segment length no video reaches: the job runs as one segment (a pipeline that must see the
// whole video, see pipeline::whole_video_reason).
constexpr int64_t kWholeVideoSegment = int64_t(1) << 40;

nlohmann::json to_json(const SegmentPlan& plan);
// Throws Error(Input) naming `source` when the plan is damaged: its seal broken, its time base
// unusable, or segments that do not cover every frame once, in order.
SegmentPlan plan_from_json(const nlohmann::json& j, const std::string& source = "plan.json");

}  // namespace framelift::jobs
