#pragma once
// Whether a job's disk holds what is left of the job (docs/jobs.md, "Disk space"): the segments
// not written yet and, where this process assembles, the output, which assembly writes while
// every segment is still on disk. Checked before the job starts (a warning), once more after its
// first segment with that segment's real size, and when a write finds the disk full (the error
// then says how much more the job needs).
#include <filesystem>
#include <map>
#include <string>

#include "jobs/journal.h"
#include "jobs/segment_plan.h"
#include "jobs/shard.h"

namespace framelift::pipeline {

// The output's size before any segment is written: the caller's forecast (the API's, from the
// planner's bits-per-pixel table for the encoder). Finished segments' real sizes replace it.
struct DiskForecast {
  double bytes_per_output_frame = 0;        // segment file bytes per frame; 0: no forecast
  double output_frames_per_input_frame = 1; // interpolation makes more
};

struct DiskNeed {
  bool known = false;          // false: no forecast and no finished segment to measure
  bool measured = false;       // sized by finished segments, not the forecast
  double segments_bytes = 0;   // the segments still to write
  double output_bytes = 0;     // the output, when this process assembles it (0 otherwise)
};

// What is left to write of the segments `selection` takes, and the output when `assembles`.
DiskNeed disk_need(const jobs::SegmentPlan& plan, const std::map<int, jobs::SegmentRecord>& done,
                   const DiskForecast& forecast, const jobs::SegmentSelection& selection, bool assembles);

// The need against the free space of the file systems it goes to (the job folder's for segments,
// the output's folder's for the output; one sum when they are the same), the tightest of them.
struct DiskCheck {
  std::string folder;
  double free_bytes = -1;   // -1: the file system cannot be asked
  double needed_bytes = 0;  // what goes to that file system
  double segments_bytes = 0, output_bytes = 0;
  double short_by() const { return free_bytes < 0 || needed_bytes <= free_bytes ? 0 : needed_bytes - free_bytes; }
};
DiskCheck check_disk(const DiskNeed& need, const std::filesystem::path& job_dir, const std::filesystem::path& output);

// "FOLDER has 1.2 MB free; the job needs about 9.5 MB more (4.7 MB of segments, 4.8 MB of output)".
std::string describe(const DiskCheck& check);

}  // namespace framelift::pipeline
