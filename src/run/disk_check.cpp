#include "run/disk_check.h"

#include "util/disk_space.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::pipeline {

DiskNeed disk_need(const jobs::SegmentPlan& plan, const std::map<int, jobs::SegmentRecord>& done,
                   const DiskForecast& forecast, const jobs::SegmentSelection& selection, bool assembles) {
  DiskNeed need;
  double done_bytes = 0, done_frames = 0;
  for (const auto& [index, record] : done) done_bytes += double(record.bytes), done_frames += double(record.frames_out);
  // A finished segment's file is the best forecast of the others: the same encoder on the same video.
  need.measured = done_frames > 0;
  const double per_frame = need.measured ? done_bytes / done_frames : forecast.bytes_per_output_frame;
  need.known = per_frame > 0;
  if (!need.known) return need;
  const int total = int(plan.segments.size());
  double left_of_all = 0;
  for (const jobs::Segment& s : plan.segments) {
    if (done.count(s.index)) continue;
    const double bytes = double(s.frames) * forecast.output_frames_per_input_frame * per_frame;
    left_of_all += bytes;
    if (selection.includes(s.index, total)) need.segments_bytes += bytes;
  }
  if (assembles) need.output_bytes = done_bytes + left_of_all + double(plan.other_stream_bytes);
  return need;
}

DiskCheck check_disk(const DiskNeed& need, const fs::path& job_dir, const fs::path& output) {
  std::error_code ec;
  const fs::path out_dir = fs::absolute(output, ec).parent_path();
  auto on = [&](const fs::path& folder, double segments, double out) {
    DiskCheck c;
    c.folder = folder.string();
    c.free_bytes = double(free_disk_bytes(folder));
    c.segments_bytes = segments;
    c.output_bytes = out;
    c.needed_bytes = segments + out;
    return c;
  };
  // One file system: named by the output's folder, the one the user chose.
  if (need.output_bytes <= 0) return on(job_dir, need.segments_bytes, 0);
  if (same_file_system(job_dir, out_dir)) return on(out_dir, need.segments_bytes, need.output_bytes);
  const DiskCheck segments = on(job_dir, need.segments_bytes, 0), out = on(out_dir, 0, need.output_bytes);
  return out.short_by() > segments.short_by() ? out : segments;
}

std::string describe(const DiskCheck& c) {
  std::string parts;
  if (c.segments_bytes > 0) parts += human_bytes(c.segments_bytes) + " of segments";
  if (c.output_bytes > 0) parts += (parts.empty() ? "" : ", ") + human_bytes(c.output_bytes) + " of output";
  return str(c.folder, " has ", c.free_bytes < 0 ? std::string("unknown") : human_bytes(c.free_bytes),
             " free; the job needs about ", human_bytes(c.needed_bytes), " more", parts.empty() ? "" : " (" + parts + ")");
}

}  // namespace framelift::pipeline
