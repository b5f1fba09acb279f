#include "framelift/run.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "framelift/version.h"
#include "pipeline/job_runner.h"
#include "pipeline/runner.h"
#include "util/stop.h"

namespace framelift {
namespace {

constexpr const char* kCancelled = "cancelled by the caller";

// Polls the caller's cancel and reports progress from a thread of its own while a run works.
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
      if (cancel_ && cancel_()) request_stop(kCancelled);
      if (progress_) progress_(snapshot());
    }
  }

  const pipeline::ProgressCounters& counters_;
  const std::function<void(const Progress&)>& progress_;
  const std::function<bool()>& cancel_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

pipeline::RunOptions run_options_of(const RunRequest& q) {
  pipeline::RunOptions r;
  r.input = q.input;
  r.output = q.output;
  r.pipeline = q.pipeline;
  r.stage_defaults = q.stage_defaults;
  r.encoder.codec = q.codec;
  r.encoder.crf = q.crf;
  r.encoder.preset = q.preset;
  r.encoder.pix_fmt = q.pix_fmt;
  r.encoder.options = q.encoder_options;
  r.max_frames = q.max_frames;
  r.overwrite = q.overwrite;
  r.progress = pipeline::ProgressMode::None;
  return r;
}

// A pass's RunReport and a job's JobReport carry the same figures.
template <class Report>
RunResult result_of(const Report& report, const RunRequest& q) {
  RunResult r;
  r.frames_in = report.frames_in;
  r.frames_out = report.frames_out;
  r.decode_errors = report.decode_errors;
  r.seconds = report.seconds;
  r.output = q.output;
  return r;
}

}  // namespace

RunResult run(const RunRequest& q, const std::function<void(const Progress&)>& progress,
              const std::function<bool()>& cancel) {
  // A cancel of an earlier call is over; a signal's stop request is not ours to clear.
  if (stop_requested() && stop_reason() == kCancelled) clear_stop_request();
  pipeline::ProgressCounters counters;
  if (!q.as_job) {
    pipeline::RunOptions r = run_options_of(q);
    r.shared_progress = &counters;
    pipeline::RunReport report;
    {
      Watcher watch(counters, progress, cancel);
      report = pipeline::run_pipeline(r);
    }
    return result_of(report, q);
  }
  pipeline::JobOptions o;
  o.run = run_options_of(q);
  o.job_dir = q.job_dir;
  o.segment_frames = q.segment_frames;
  o.progress = pipeline::ProgressMode::None;
  o.framelift_version = version();
  o.counters = &counters;
  pipeline::JobReport report;
  {
    Watcher watch(counters, progress, cancel);
    report = pipeline::run_job(o);
  }
  return result_of(report, q);
}

}  // namespace framelift
