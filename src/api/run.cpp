#include "framelift/run.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "framelift/error.h"
#include "framelift/version.h"
#include "api/request.h"
#include "pipeline/batch_runner.h"
#include "pipeline/job_runner.h"
#include "pipeline/runner.h"
#include "util/stop.h"

namespace framelift {
namespace {

constexpr const char* kCancelled = "cancelled by the caller";

// Polls the caller's cancel and reports progress from a thread of its own while a run works on
// the thread that made the Watcher. The cancel reaches only that run's threads (util/stop.h); a
// signal still stops every run.
class Watcher {
 public:
  Watcher(const pipeline::ProgressCounters& counters, const std::function<void(const Progress&)>& progress,
          const std::function<bool()>& cancel)
      : counters_(counters), progress_(progress), cancel_(cancel), start_(std::chrono::steady_clock::now()) {
    if (progress_ || cancel_) thread_ = std::thread([this] { loop(); });
  }
  ~Watcher() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (progress_) progress_(snapshot());  // the final figures
  }

 private:
  Progress snapshot() const {
    Progress p;
    p.frames_in = counters_.frames_in;
    p.frames_total = counters_.total_in ? counters_.total_in.load() : counters_.total_out.load();
    p.frames_out = counters_.frames_out;
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return p;
  }
  void loop() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [&] { return stop_; })) {
      if (cancel_ && cancel_()) flag_.cancel(kCancelled);
      if (progress_) progress_(snapshot());
    }
  }

  const pipeline::ProgressCounters& counters_;
  // Copies: a caller may pass temporaries.
  const std::function<void(const Progress&)> progress_;
  const std::function<bool()> cancel_;
  CancelFlag flag_;
  CancelScope cancelling_{&flag_};  // after flag_: it is undone before flag_ goes
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

// A pass's RunReport and a job's JobReport carry the same figures.
template <class Report>
RunResult result_of(const Report& report, const RunRequest& q) {
  RunResult r;
  r.frames_in = report.frames_in;
  r.frames_out = report.frames_out;
  r.decode_errors = report.decode_errors;
  r.seconds = report.seconds;
  r.output = q.output;
  r.summary = report.summary();
  return r;
}

RunResult job_result_of(const pipeline::JobReport& report, const RunRequest& q) {
  RunResult r = result_of(report, q);
  r.job_dir = report.job_dir.string();
  r.segments = report.segments;
  r.segments_done_before = report.done_before;
  r.segments_done_now = report.done_now;
  r.segments_remaining = report.remaining;
  r.assembled = report.assembled;
  return r;
}

}  // namespace

RunResult run(const RunRequest& q, const std::function<void(const Progress&)>& progress,
              const std::function<bool()>& cancel) {
  pipeline::ProgressCounters counters;
  if (!q.as_job) {
    pipeline::RunOptions r = api::run_options_of(q);
    // The counters feed the callback; the run's own display (CLI) needs them unshared.
    if (progress || cancel || q.display == ProgressDisplay::None) r.shared_progress = &counters;
    pipeline::RunReport report;
    {
      Watcher watch(counters, progress, cancel);
      report = pipeline::run_pipeline(r);
    }
    return result_of(report, q);
  }
  pipeline::JobOptions o = api::job_options_of(q);
  o.counters = &counters;
  pipeline::JobReport report;
  {
    Watcher watch(counters, progress, cancel);
    report = pipeline::run_job(o);
  }
  return job_result_of(report, q);
}

bool is_batch_input(const std::string& input) { return pipeline::is_batch_input(input); }

BatchResult run_batch(const RunRequest& q, const std::function<bool()>& cancel) {
  if (!q.job_dir.empty() || !q.shard.empty() || !q.segments.empty() || q.prepare_only)
    throw Error(ErrorKind::Usage, "a batch (-i FOLDER or LIST) takes no --job-dir, --shard, --segments or --prepare");
  pipeline::ProgressCounters counters;
  pipeline::BatchReport report;
  {
    Watcher watch(counters, {}, cancel);
    report = pipeline::run_batch(api::job_options_of(q), pipeline::batch_inputs(q.input), q.output);
  }
  return {report.done, report.failed, report.remaining, report.summary.string()};
}

}  // namespace framelift
