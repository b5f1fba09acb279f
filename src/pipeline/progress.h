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
ProgressMode parse_progress_mode(const std::string& text);

struct ProgressCounters {
  std::atomic<int64_t> frames_in{0};   // decoded
  std::atomic<int64_t> frames_out{0};  // encoded
  std::atomic<int64_t> total_out{0};   // expected output frames (0 if unknown)
};

struct ProgressSnapshot {
  int64_t frames_in = 0, frames_out = 0, total_out = 0;
  double elapsed_s = 0, fps = 0, eta_s = -1;
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
