#pragma once
// Which segments a worker takes: all (cooperating through claims), one shard of N (a Slurm array
// task, a Kubernetes Indexed Job pod), or an explicit range.
#include <string>

namespace framelift::jobs {

struct SegmentSelection {
  int shard = 0, shards = 1;   // shard K of N: a contiguous block, so each worker decodes one stretch
  int first = 0, last = -1;    // an explicit inclusive range; last < 0: to the end

  bool sharded() const { return shards > 1 || first > 0 || last >= 0; }
  bool includes(int index, int total) const;
  std::string describe() const;
};

// "K/N" (0-based K), or "auto/N" / "auto": K (and N) from the environment: SLURM_ARRAY_TASK_ID
// minus SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT, or Kubernetes' JOB_COMPLETION_INDEX.
// Throws Error(Usage) with the reason.
SegmentSelection parse_shard(const std::string& text);
// Only when asked: an array whose tasks each process a different video is just as common, and
// silently treating those as shards of one job would skip most of every video.
// "A-B" or "A" (0-based, inclusive).
SegmentSelection parse_segment_range(const std::string& text);

}  // namespace framelift::jobs
