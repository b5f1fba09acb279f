#pragma once
// What run() and run_batch() do with the caller's progress and cancel callbacks while the work
// goes on: a thread of the watcher's own polls cancel and reports progress four times a second.
// The callbacks are the caller's code on a thread the caller did not make, so an exception from
// one must not leave that thread (std::terminate): it is caught there, the run is cancelled, and
// finish_and_rethrow() turns it into framelift::Error on the caller's thread.
//
// Thread-safety: construct, finish and destroy on the thread that runs the work.
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "framelift/run.h"
#include "run/progress.h"
#include "util/stop.h"

namespace framelift::api {

class RunWatcher {
 public:
  // The cancel reaches only this run's threads (util/stop.h); a signal still stops every run.
  RunWatcher(const pipeline::ProgressCounters& counters, const std::function<void(const Progress&)>& progress,
             const std::function<bool()>& cancel);
  ~RunWatcher();  // finish(), dropping a callback's failure: only for unwinding
  RunWatcher(const RunWatcher&) = delete;
  RunWatcher& operator=(const RunWatcher&) = delete;

  // Stops the thread and reports the final figures (on this thread). Idempotent.
  void finish();
  // After the work returned or threw `work_error` (nullptr: returned): finish(), then throws
  // Error(Interrupted) naming the callback and its exception if one threw; else rethrows
  // work_error, if any.
  void finish_and_rethrow(std::exception_ptr work_error);

 private:
  Progress snapshot() const;
  void loop();
  // Calls `f`, the callback named `which`; false (and the run cancelled) when it threw.
  bool guarded(const char* which, const std::function<void()>& f);

  const pipeline::ProgressCounters& counters_;
  // Copies: a caller may pass temporaries.
  const std::function<void(const Progress&)> progress_;
  const std::function<bool()> cancel_;
  CancelFlag flag_;
  CancelScope cancelling_{&flag_};  // after flag_: it is undone before flag_ goes
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false, finished_ = false;
  // The first callback's exception: written by the watcher's thread, read after it is joined.
  std::string failure_;
  std::thread thread_;
};

// Runs `work` under a RunWatcher: its result, or the error finish_and_rethrow() decides.
template <class Work>
auto watched(const pipeline::ProgressCounters& counters, const std::function<void(const Progress&)>& progress,
             const std::function<bool()>& cancel, Work&& work) {
  RunWatcher watch(counters, progress, cancel);
  try {
    auto result = work();
    watch.finish_and_rethrow(nullptr);
    return result;
  } catch (...) {
    watch.finish_and_rethrow(std::current_exception());
    throw;  // not reached: finish_and_rethrow always throws here
  }
}

}  // namespace framelift::api
