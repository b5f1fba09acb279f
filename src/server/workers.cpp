#include "server/workers.h"

#include <algorithm>
#include <chrono>

#include <framelift/error.h>
#include <framelift/run.h>

#include "server/store_retry.h"
#include "util/log.h"
#include "util/stop.h"
#include "util/str.h"

namespace framelift::server {
namespace fs = std::filesystem;
namespace {

// The encoder and job options a client may set (docs/server.md), onto the request.
void apply_options(const nlohmann::json& o, RunRequest& r) {
  if (!o.is_object()) return;
  if (o.contains("codec")) r.codec = o["codec"].get<std::string>();
  if (o.contains("crf")) r.crf = o["crf"].get<double>();
  if (o.contains("preset")) r.preset = o["preset"].get<std::string>();
  if (o.contains("pix_fmt")) r.pix_fmt = o["pix_fmt"].get<std::string>();
  if (o.contains("segment_frames")) r.segment_frames = o["segment_frames"].get<int64_t>();
  if (o.contains("max_frames")) r.max_frames = o["max_frames"].get<int64_t>();
}

// How often a running job asks the database whether its user cancelled it, and the disk how
// much is free: cheap, but not at every progress report.
constexpr std::chrono::milliseconds kCheckEvery{300};

// A job's end state is worth waiting for: about half a minute of tries before it is left for the
// next start to requeue.
constexpr RetryPolicy kSettlePolicy{10, std::chrono::milliseconds(250), std::chrono::milliseconds(5000)};

// What run()'s callbacks do for one job, on run()'s watcher thread. They never throw (run() would
// cancel the job and say the callback threw): a progress write that keeps failing, or the disk
// running low, is kept as the reason the job stops, and the next cancel poll stops it.
class JobCallbacks {
 public:
  JobCallbacks(Store& store, int64_t id, const DiskGuard& disk, const std::atomic<bool>& stopping)
      : store_(store), id_(id), disk_(disk), stopping_(stopping) {}

  void progress(const Progress& p) {
    last_ = p;
    if (!failure_.empty()) return;
    const std::string why = write_with_retry([&] {
      store_.record_progress(id_, p.frames_in, p.frames_total, p.seconds > 0 ? p.frames_out / p.seconds : 0.0);
    });
    if (why.empty()) return;
    failure_ = str("cannot record the job's progress (", why, ")");
    log::warn("serve: job ", id_, ": ", failure_, "; stopping it");
  }

  bool cancel() {
    if (stopping_ || cancelled_ || !failure_.empty()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_check_ < kCheckEvery) return false;
    last_check_ = now;
    if (const std::string low = disk_.shortage(); !low.empty()) {
      failure_ = low + "; the job stopped before writing its output";
      log::warn("serve: job ", id_, ": ", failure_);
      return true;
    }
    try {
      cancelled_ = store_.cancel_requested(id_);
    } catch (const std::exception& e) {
      log::warn("serve: job ", id_, ": cannot read whether it was cancelled: ", e.what());  // asked again next time
    }
    return cancelled_;
  }

  const Progress& last() const { return last_; }
  bool cancelled() const { return cancelled_; }
  const std::string& failure() const { return failure_; }  // "" while nothing went wrong

 private:
  Store& store_;
  int64_t id_;
  const DiskGuard& disk_;
  const std::atomic<bool>& stopping_;
  Progress last_;
  bool cancelled_ = false;
  std::string failure_;
  std::chrono::steady_clock::time_point last_check_{};
};

}  // namespace

Workers::Workers(Store& store, fs::path data_dir, std::vector<std::string> devices, const DiskGuard& disk,
                 std::optional<PipelinePolicy> policy)
    : store_(store), data_dir_(std::move(data_dir)), disk_(disk), policy_(std::move(policy)) {
  if (devices.empty()) devices.push_back("");
  for (const std::string& d : devices) threads_.emplace_back([this, d] { loop(d); });
}

Workers::~Workers() { stop(); }

void Workers::wake() {
  std::lock_guard lock(mutex_);
  wake_.notify_all();
}

void Workers::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

fs::path Workers::output_path(const fs::path& data_dir, const JobRecord& job) {
  return data_dir / "outputs" / std::to_string(job.id) / job.spec.output_name;
}

fs::path Workers::job_dir(const fs::path& data_dir, int64_t id) { return data_dir / "jobs" / std::to_string(id); }

void Workers::loop(const std::string& device) {
  // A SIGTERM stops the running job at once (run() sees it), before stop() is called: no slot may
  // claim the job it just requeued, or any other, from then on.
  while (!stopping_ && !stop_requested()) {
    std::optional<JobRecord> job;
    try {
      job = store_.claim_next();
    } catch (const Error& e) {
      log::error("serve: ", e.what());
    }
    if (!job) {
      std::unique_lock lock(mutex_);
      // Also polls: a job queued by another server process on the same data folder is seen too.
      wake_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_.load(); });
      continue;
    }
    try {
      execute(*job, device);
    } catch (const std::exception& e) {
      // An exception here would end the process (std::terminate): the job is left to the next start.
      log::error("serve: job ", job->id, ": ", e.what());
    }
  }
}

bool Workers::settle(int64_t id, JobState state, const std::string& error) {
  const std::string why = write_with_retry([&] { store_.finish(id, state, error); }, kSettlePolicy);
  if (why.empty()) return true;
  log::error("serve: job ", id, ": cannot record it ", job_state_name(state), " (", why, "); the next start requeues it");
  return false;
}

void Workers::remove_job_dir(int64_t id) {
  std::error_code ec;
  fs::remove_all(job_dir(data_dir_, id), ec);
  if (ec) log::warn("serve: job ", id, ": cannot remove its job folder: ", ec.message());
}

void Workers::execute(const JobRecord& job, const std::string& device) {
  RunRequest r;
  r.input = job.spec.input;
  r.output = output_path(data_dir_, job).string();
  r.job_dir = job_dir(data_dir_, job.id).string();
  r.pipeline = job.spec.pipeline;
  r.policy = policy_;
  // DATA/outputs/ID is the job's own: an output there is this job's, assembled before the server
  // died and recorded it done; the job folder's assembled.json tells run() so.
  r.overwrite = true;
  if (!device.empty()) r.stage_defaults["device"] = device;
  std::error_code ec;
  // The output exists and its job folder is gone: the server died between the record of the
  // assembly and the removal of the folder, or (before that order) between the two. Done.
  if (fs::exists(r.output, ec) && !fs::exists(r.job_dir, ec)) {
    settle(job.id, JobState::Done);
    return;
  }
  if (const std::string low = disk_.shortage(); !low.empty()) {
    settle(job.id, JobState::Failed, "not started: " + low);
    return;
  }
  JobCallbacks callbacks(store_, job.id, disk_, stopping_);
  try {
    apply_options(job.spec.options, r);
    fs::create_directories(fs::path(r.output).parent_path());
    log::info("serve: job ", job.id, " (", job.user, ") started: ", job.spec.pipeline.empty() ? "pass-through" : job.spec.pipeline);
    const RunResult res = run(
        r, [&](const Progress& p) { callbacks.progress(p); }, [&] { return callbacks.cancel(); });
    // The last report may come before the last frames: a finished job shows all of them.
    const Progress& last = callbacks.last();
    const int64_t all = std::max({last.frames_total, last.frames_in, res.frames_in});
    write_with_retry([&] { store_.record_progress(job.id, all, all, res.seconds > 0 ? res.frames_out / res.seconds : 0.0); });
    if (!settle(job.id, JobState::Done)) return;  // the folder stays: the next start finds it assembled
    remove_job_dir(job.id);
    write_with_retry([&] { store_.add_event(job.id, "summary", res.summary); });
    log::info("serve: job ", job.id, " done: ", res.summary);
  } catch (const Error& e) {
    if (!callbacks.failure().empty()) {
      settle(job.id, JobState::Failed, callbacks.failure() + "; finished segments are kept (retry resumes)");
      log::warn("serve: job ", job.id, " failed: ", callbacks.failure());
    } else if (e.kind() == ErrorKind::Interrupted && (stopping_ || stop_requested())) {
      write_with_retry([&] { store_.requeue(job.id, "the server stopped; finished segments are kept"); }, kSettlePolicy);
      log::info("serve: job ", job.id, " requeued: the server is stopping");
    } else if (e.kind() == ErrorKind::Interrupted && callbacks.cancelled()) {
      settle(job.id, JobState::Cancelled, "cancelled by its user");
    } else {
      settle(job.id, JobState::Failed, e.what());
      log::warn("serve: job ", job.id, " failed: ", e.what());
    }
  } catch (const std::exception& e) {
    settle(job.id, JobState::Failed, str("internal error: ", e.what()));
    log::error("serve: job ", job.id, ": internal error: ", e.what());
  }
}

}  // namespace framelift::server
