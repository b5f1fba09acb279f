#pragma once
// Joins a job's finished segments into the output: the video packets of every segment in order
// (no re-encode: each segment starts with a keyframe and carries the same stream parameters),
// interleaved with every other stream of the source (audio, subtitles, attachments, data),
// copied bit-exact, plus the source's metadata and chapters. Written under a temporary name and
// renamed when complete, like every output; run again after a crash, it simply starts over
// (it copies packets, which takes seconds, not the hours the segments took).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>

#include "jobs/job_dir.h"
#include "jobs/job_spec.h"
#include "jobs/journal.h"
#include "jobs/segment_plan.h"
#include "util/fs.h"

namespace framelift::jobs {

struct AssembleReport {
  int segments = 0;
  int64_t video_frames = 0;
  int64_t other_packets = 0;
  std::filesystem::path output;
};

// `done` must hold a record for every segment of `plan`; throws Error(Usage) naming the missing
// ones otherwise, Error(Output) when the output cannot be written or the result does not hold
// the recorded number of frames (nothing is left under the final name then), Error(Interrupted)
// on a stop before the rename into place (none after it: the output is complete then). `replaceable` is
// the file at the output when the job started (-y was checked then): only that one is replaced;
// a file that appeared since is kept and the result goes next to it (Error(Output) says where).
AssembleReport assemble_segments(const JobDir& dir, const JobSpec& spec, const SegmentPlan& plan,
                                 const std::map<int, SegmentRecord>& done, std::optional<FileIdentity> replaceable);

// Counts the video frames (packets) of a finished output: the check before hooks such as
// --shutdown-when-done trust it. Throws Error(Input) when it does not open. A stop does not cut
// it short: the output it counts is in place already, and the job ends with its check done.
int64_t count_video_packets(const std::filesystem::path& file);

}  // namespace framelift::jobs
