#include "framelift/run.h"

#include "framelift/error.h"
#include "framelift/version.h"
#include "api/disk_forecast.h"
#include "api/request.h"
#include "api/run_watcher.h"
#include "run/batch_runner.h"
#include "run/job_runner.h"
#include "run/runner.h"

namespace framelift {
namespace {

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
  // Before anything parses the graph or opens a model (a job asks libavfilter about the graph
  // while it plans its segments).
  if (q.policy) check_pipeline(q.pipeline, *q.policy);
  pipeline::ProgressCounters counters;
  if (!q.as_job) {
    pipeline::RunOptions r = api::run_options_of(q);
    // The counters feed the callback; the run's own display (CLI) needs them unshared.
    pipeline::RunContext context;
    if (progress || cancel || q.display == ProgressDisplay::None) context.shared_progress = &counters;
    const pipeline::RunReport report =
        api::watched(counters, progress, cancel, [&] { return pipeline::run_pipeline(r, context); });
    return result_of(report, q);
  }
  pipeline::JobOptions o = api::job_options_of(q);
  o.counters = &counters;
  o.disk_forecast = [&q] { return api::disk_forecast(q); };
  const pipeline::JobReport report = api::watched(counters, progress, cancel, [&] { return pipeline::run_job(o); });
  return job_result_of(report, q);
}

bool is_batch_input(const std::string& input) { return pipeline::is_batch_input(input); }

BatchResult run_batch(const RunRequest& q, const std::function<bool()>& cancel) {
  if (!q.job_dir.empty() || q.shard || q.segments || q.prepare_only)
    throw Error(ErrorKind::Usage, "a batch (-i FOLDER or LIST) takes no --job-dir, --shard, --segments or --prepare");
  if (q.policy) check_pipeline(q.pipeline, *q.policy);
  pipeline::ProgressCounters counters;
  const pipeline::BatchReport report = api::watched(counters, {}, cancel, [&] {
    return pipeline::run_batch(api::job_options_of(q), pipeline::batch_inputs(q.input), q.output);
  });
  return {report.done, report.failed, report.remaining, report.summary.string()};
}

}  // namespace framelift
