#include "api/run_watcher.h"

#include "framelift/error.h"
#include "util/str.h"

namespace framelift::api {
namespace {

constexpr const char* kCancelled = "cancelled by the caller";
// The CancelFlag keeps a pointer: the text itself goes in the Error finish_and_rethrow() throws.
constexpr const char* kCallbackFailed = "the run stopped";

std::string what_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace

RunWatcher::RunWatcher(const pipeline::ProgressCounters& counters, const std::function<void(const Progress&)>& progress,
                       const std::function<bool()>& cancel)
    : counters_(counters), progress_(progress), cancel_(cancel), start_(std::chrono::steady_clock::now()) {
  if (progress_ || cancel_) thread_ = std::thread([this] { loop(); });
}

RunWatcher::~RunWatcher() { finish(); }

void RunWatcher::finish() {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // The final figures, unless the callback already failed: it is not called again after that.
  if (progress_ && failure_.empty()) guarded("progress", [&] { progress_(snapshot()); });
}

void RunWatcher::finish_and_rethrow(std::exception_ptr work_error) {
  finish();
  if (!failure_.empty()) {
    // The callback's failure is the cause of an Interrupted; any other error came first.
    bool other_error = false;
    if (work_error) {
      try {
        std::rethrow_exception(work_error);
      } catch (const Error& e) {
        other_error = e.kind() != ErrorKind::Interrupted;
      } catch (...) {
        other_error = true;
      }
    }
    if (!other_error) {
      const std::string how = work_error ? what_of(work_error) : "the work had finished";
      throw Error(ErrorKind::Interrupted, str(failure_, "; ", how));
    }
  }
  if (work_error) std::rethrow_exception(work_error);
}

Progress RunWatcher::snapshot() const {
  Progress p;
  p.frames_in = counters_.frames_in;
  p.frames_total = counters_.total_in ? counters_.total_in.load() : counters_.total_out.load();
  p.frames_out = counters_.frames_out;
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return p;
}

bool RunWatcher::guarded(const char* which, const std::function<void()>& f) {
  try {
    f();
    return true;
  } catch (...) {
    const std::string what = what_of(std::current_exception());
    if (failure_.empty()) failure_ = str("the ", which, " callback threw: ", what);
    flag_.cancel(kCallbackFailed);
    return false;
  }
}

void RunWatcher::loop() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [&] { return stop_; })) {
    // The callbacks run unlocked: a slow one must not hold up finish().
    lock.unlock();
    bool ok = true;
    if (cancel_) ok = guarded("cancel", [&] {
      if (cancel_()) flag_.cancel(kCancelled);
    });
    if (ok && progress_) ok = guarded("progress", [&] { progress_(snapshot()); });
    lock.lock();
    if (!ok) return;  // cancelled: the callbacks are not called again
  }
}

}  // namespace framelift::api
