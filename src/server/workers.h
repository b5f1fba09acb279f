#pragma once
// The server's worker slots: one thread per device, each taking the next queued job from the
// store and running it with framelift::run() as a resumable job in DATA/jobs/ID, its output in
// DATA/outputs/ID/NAME. A job stopped by the server's own stop goes back to the queue (its job
// folder keeps the finished segments); one cancelled by its user ends cancelled. The job folder
// goes once the output is assembled and the job recorded done; a failed or cancelled job keeps
// it, so that a retry resumes from its finished segments.
//
// Nothing a job meets ends the server: a database write that fails (locked past the busy
// timeout) is retried, then the job fails with the reason; a disk under --min-free-bytes fails
// the job before it starts, or stops it, its output not written.
//
// Thread-safety: construct and stop() from one thread; wake() from any.
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <framelift/policy.h>

#include "server/disk_space.h"
#include "server/store.h"

namespace framelift::server {

class Workers {
 public:
  // devices: one slot each ("cuda:0", "cpu"); empty: one slot on the default device. `disk` is
  // not owned and outlives this. policy: what each job's pipeline may do, checked again when it
  // runs (a job queued before the policy existed, or before the roots changed, is held to it too);
  // nullopt: anything.
  Workers(Store& store, std::filesystem::path data_dir, std::vector<std::string> devices, const DiskGuard& disk,
          std::optional<PipelinePolicy> policy = std::nullopt);
  ~Workers();  // stop()
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  void wake();  // a job was queued
  // Running jobs are stopped (within a frame or a tile) and requeued; blocks until the threads end.
  void stop();

  static std::filesystem::path output_path(const std::filesystem::path& data_dir, const JobRecord& job);
  static std::filesystem::path job_dir(const std::filesystem::path& data_dir, int64_t id);

 private:
  void loop(const std::string& device);
  void execute(const JobRecord& job, const std::string& device);
  // The job's end state, retried for a while (the database may be locked); false when it could
  // not be written: the job stays running until the next start requeues it.
  bool settle(int64_t id, JobState state, const std::string& error = "");
  void remove_job_dir(int64_t id);

  Store& store_;
  std::filesystem::path data_dir_;
  const DiskGuard& disk_;
  const std::optional<PipelinePolicy> policy_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::thread> threads_;
};

}  // namespace framelift::server
