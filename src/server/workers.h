#pragma once
// The server's worker slots: one thread per device, each taking the next queued job from the
// store and running it with framelift::run() as a resumable job in DATA/jobs/ID, its output in
// DATA/outputs/ID/NAME. A job stopped by the server's own stop goes back to the queue (its job
// folder keeps the finished segments); one cancelled by its user ends cancelled.
//
// Thread-safety: construct and stop() from one thread; wake() from any.
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/store.h"

namespace framelift::server {

class Workers {
 public:
  // devices: one slot each ("cuda:0", "cpu"); empty: one slot on the default device.
  Workers(Store& store, std::filesystem::path data_dir, std::vector<std::string> devices);
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

  Store& store_;
  std::filesystem::path data_dir_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::thread> threads_;
};

}  // namespace framelift::server
