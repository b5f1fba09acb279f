#include "server/workers.h"

#include <algorithm>
#include <chrono>

#include <framelift/error.h>
#include <framelift/run.h>

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

}  // namespace

Workers::Workers(Store& store, fs::path data_dir, std::vector<std::string> devices) : store_(store), data_dir_(std::move(data_dir)) {
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
    execute(*job, device);
  }
}

void Workers::execute(const JobRecord& job, const std::string& device) {
  RunRequest r;
  r.input = job.spec.input;
  r.output = output_path(data_dir_, job).string();
  r.job_dir = job_dir(data_dir_, job.id).string();
  r.pipeline = job.spec.pipeline;
  if (!device.empty()) r.stage_defaults["device"] = device;
  std::error_code ec;
  // The output exists and its job folder is gone: the server died between the assembly and the
  // record of it. The work is done.
  if (fs::exists(r.output, ec) && !fs::exists(r.job_dir, ec)) {
    store_.finish(job.id, JobState::Done);
    return;
  }
  try {
    apply_options(job.spec.options, r);
    fs::create_directories(fs::path(r.output).parent_path());
    log::info("serve: job ", job.id, " (", job.user, ") started: ", job.spec.pipeline.empty() ? "pass-through" : job.spec.pipeline);
    auto last_check = std::chrono::steady_clock::now();
    bool cancelled = false;
    Progress last;
    const RunResult res = run(
        r,
        [&](const Progress& p) {
          last = p;
          store_.record_progress(job.id, p.frames_in, p.frames_total, p.seconds > 0 ? p.frames_out / p.seconds : 0.0);
        },
        [&] {
          if (stopping_) return true;
          const auto now = std::chrono::steady_clock::now();
          if (now - last_check > std::chrono::milliseconds(300)) {
            last_check = now;
            cancelled = cancelled || store_.cancel_requested(job.id);
          }
          return cancelled;
        });
    // The last report may come before the last frames: a finished job shows all of them.
    const int64_t all = std::max({last.frames_total, last.frames_in, res.frames_in});
    store_.record_progress(job.id, all, all, res.seconds > 0 ? res.frames_out / res.seconds : 0.0);
    store_.finish(job.id, JobState::Done);
    store_.add_event(job.id, "summary", res.summary);
    log::info("serve: job ", job.id, " done: ", res.summary);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Interrupted && (stopping_ || stop_requested())) {
      store_.requeue(job.id, "the server stopped; finished segments are kept");
      log::info("serve: job ", job.id, " requeued: the server is stopping");
    } else if (e.kind() == ErrorKind::Interrupted) {
      store_.finish(job.id, JobState::Cancelled, "cancelled by its user");
    } else {
      store_.finish(job.id, JobState::Failed, e.what());
      log::warn("serve: job ", job.id, " failed: ", e.what());
    }
  } catch (const std::exception& e) {
    store_.finish(job.id, JobState::Failed, str("internal error: ", e.what()));
    log::error("serve: job ", job.id, ": internal error: ", e.what());
  }
}

}  // namespace framelift::server
