#pragma once
// Progress of a run: counters updated by the pipeline threads, shown by a reporter thread as a
// live bar on a terminal or as JSON lines for machines (--progress json).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace framelift::pipeline {

enum class ProgressMode { Auto, Bar, Json, None };

struct ProgressCounters {
  std::atomic<int64_t> frames_in{0};   // decoded
  std::atomic<int64_t> frames_out{0};  // encoded
  std::atomic<int64_t> total_out{0};   // expected output frames (0 if unknown)
  // A job counts progress in input frames over all its segments: frames_in starts at what earlier
  // runs finished (start_in), so a resumed job shows overall progress, and speed and ETA come
  // from this run's share.
  std::atomic<int64_t> total_in{0};
  std::atomic<int64_t> start_in{0};
  double hourly_price = 0;             // > 0: show the money spent and the projected total
  double earlier_seconds = 0;          // processing time of earlier runs, for the cost
};

struct ProgressSnapshot {
  int64_t frames_in = 0, frames_out = 0, total_out = 0, total_in = 0;
  double elapsed_s = 0, fps = 0, eta_s = -1;
  double fraction = -1;                 // overall done, 0..1 (-1: unknown)
  double spent = -1, projected = -1;    // money, with an hourly price
  std::string to_json(const std::string& event) const;
  std::string to_bar(int width) const;
};

class ProgressReporter {
 public:
  ProgressReporter(ProgressMode mode, const ProgressCounters& counters);
  ~ProgressReporter();  // stops the thread
  ProgressSnapshot snapshot() const;
  void finish();        // prints the final line

 private:
  void loop();
  void print(bool final);

  ProgressMode mode_;
  const ProgressCounters& counters_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace framelift::pipeline
