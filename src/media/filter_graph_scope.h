#pragma once
// Whether a libavfilter graph can run on a job's segments one at a time. A job cuts the video into
// segments that workers process independently, each graph fed its segment (plus the neighbours a
// stage's `context` asks for) with the frames' own timestamps. A filter whose output at a frame
// depends on how many frames came before it (select's n, trim, fps, decimate, fade's start frame,
// an expression reading the frame counter `n`) would restart its count at every segment and write
// a different video with exit 0; such a graph has to see the whole video in one piece.
//
// Known per-frame filters (scale, crop, eq, unsharp, nlmeans, ...) and temporal filters with a
// bounded window (hqdn3d, tmix, bwdif, ...: the stage's `context` covers them) are cut; anything
// else counts as whole-video, since framelift cannot know a filter it has no word on. Expressions
// of the per-frame ones may read t and pts (the frames keep their timestamps), not counters.
#include <string>

namespace framelift::media {

// Why `description` must see the whole video in one piece, naming the filter and what it reads
// ("select counts, drops or retimes frames from the start of the video"); "" when every filter in
// it works frame by frame. A description libavfilter cannot parse gives "": the stage that builds
// it reports the error. Pure; thread-safe.
std::string whole_video_reason(const std::string& description);

}  // namespace framelift::media
