#pragma once
// Workers that share a job folder (several GPUs, several machines on shared storage, a Slurm
// array) split the segments without a coordinator: a worker takes a segment by creating its lock
// file with O_EXCL, which exactly one creator wins, also over NFS. A worker that dies (SIGKILL, a
// reclaimed instance) cannot release its locks, so a live worker refreshes the modification
// time of each lock it holds (heartbeat), and a lock not refreshed for `stale_after` is taken
// over: renamed away first (only one of several contenders' renames succeeds), then claimed anew.
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>

#include "jobs/job_dir.h"

namespace framelift::jobs {

class SegmentClaims {
 public:
  SegmentClaims(JobDir dir, std::string worker, std::chrono::seconds stale_after);

  // True when this worker now holds segment `index`.
  bool try_claim(int index);
  void release(int index);
  // Refreshes every lock this worker holds; call well within stale_after (the driver: every
  // stale_after / 4).
  void heartbeat();
  // Whether the lock is still this worker's: a worker that stalled past stale_after may have been
  // taken over, and must then drop its copy of the segment instead of committing it.
  bool holds(int index) const;
  // The worker holding `index`, "" when free (for messages).
  std::string holder(int index) const;

  const std::string& worker() const { return worker_; }

 private:
  bool create(int index);

  JobDir dir_;
  std::string worker_;
  std::chrono::seconds stale_after_;
  std::mutex mutex_;
  std::set<int> held_;
};

// "host:pid:random": unique across machines sharing a folder.
std::string make_worker_id();

}  // namespace framelift::jobs
