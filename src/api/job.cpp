#include "framelift/job.h"

#include <chrono>

#include "api/request.h"
#include "run/job_runner.h"
#include "util/error.h"

namespace framelift {

struct Job::Impl {
  std::string dir;
  RunRequest request;
};

Job::Job(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Job::~Job() = default;
Job::Job(Job&&) noexcept = default;
Job& Job::operator=(Job&&) noexcept = default;

Job Job::create(const RunRequest& request) {
  RunRequest prepare = request;
  prepare.as_job = true;
  prepare.prepare_only = true;
  const RunResult made = run(prepare);
  return open(made.job_dir);
}

Job Job::open(const std::string& job_dir) {
  int64_t segment_frames = 0;
  const pipeline::RunOptions saved = pipeline::load_job_run_options(job_dir, &segment_frames);
  auto impl = std::make_unique<Impl>();
  impl->dir = job_dir;
  impl->request = api::request_of(saved, segment_frames);
  impl->request.job_dir = job_dir;
  impl->request.keep_job_dir = true;  // a folder opened by name is the caller's
  return Job(std::move(impl));
}

const std::string& Job::dir() const { return impl_->dir; }
const RunRequest& Job::request() const { return impl_->request; }

JobStatus Job::status() const {
  const pipeline::JobState s = pipeline::job_state(impl_->dir);
  return {impl_->dir, s.output.string(), s.segments, s.finished};
}

JobStatus Job::work(const WorkRequest& w, const std::function<void(const Progress&)>& progress,
                    const std::function<bool()>& cancel) {
  RunRequest r = impl_->request;
  r.assemble = false;
  r.shard = w.shard;
  r.segments = w.segments;
  r.devices = w.devices;
  if (!w.device.empty()) r.stage_defaults["device"] = w.device;
  r.warm_segments = w.warm_segments;
  r.claim_timeout_s = w.claim_timeout_s;
  r.display = w.display;
  r.lifecycle = w.lifecycle;
  run(r, progress, cancel);
  return status();
}

std::string Job::assemble(bool overwrite, int wait_s) {
  return pipeline::assemble_job(impl_->dir, overwrite, std::chrono::seconds(std::max(0, wait_s))).string();
}

}  // namespace framelift
