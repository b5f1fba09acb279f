#pragma once
// A job folder as an object: what `framelift run --prepare`, `resume` and `assemble` do, for
// programs that spread one video over workers themselves (a scheduler, a GUI with a queue, a
// service). A job is a folder of segments, a journal of the finished ones and the request that
// makes them (docs/jobs.md); any number of workers, in threads, processes or machines sharing
// the folder, take unfinished segments, and any of them assembles the output at the end.
//
// Usage:
//
//   framelift::RunRequest r;  // input, output, pipeline, encoder, segment_frames, ...
//   framelift::Job job = framelift::Job::create(r);             // job.json + plan.json
//   framelift::Job::open(job.dir()).work({.shard = framelift::Shard{0, 2}});  // on one machine
//   framelift::Job::open(job.dir()).work({.shard = framelift::Shard{1, 2}});  // on another
//   std::string out = framelift::Job::open(job.dir()).assemble();
//
// Errors: throw framelift::Error: Usage (a folder that holds no job, or another job without
// restart; a bad shard), Input, Output, Model, Resource as run() does, Interrupted on a cancel or
// a signal (finished segments are kept).
//
// Lifetime and thread-safety: a Job is a handle on the folder (its path and request); it owns no
// worker. Its functions may be called from several threads and processes at once: claims in the
// folder keep workers apart.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framelift/run.h"

namespace framelift {

struct JobStatus {
  std::string job_dir, output;
  int segments = 0;  // in the plan
  int finished = 0;  // recorded in the journal (their files checked when work() resumes)
};

// What one worker takes and how it runs (the job's request says what is made).
struct WorkRequest {
  std::optional<Shard> shard{};            // this worker's share (Slurm, Kubernetes); nullopt: every segment
  std::optional<SegmentRange> segments{};  // only these; nullopt: every segment
  std::vector<std::string> devices{};      // one worker thread per device; empty: the job's device
  std::string device{};                    // run on this device instead of the job's ("cpu", "cuda:1")
  bool warm_segments = true;               // build the pipeline once per worker
  int claim_timeout_s = 120;               // a worker silent this long loses its segment to another
  ProgressDisplay display = ProgressDisplay::None;
  MachineLifecycle lifecycle{};            // preemption watch, hooks, hourly price
};

class Job {
 public:
  // Writes the job folder for `request` (request.job_dir, or OUTPUT.framelift-job): job.json and
  // the segment plan (cut at keyframes), and processes nothing. A folder that already holds the
  // same request is opened as it is; one that holds another is refused (Usage) unless
  // request.restart.
  static Job create(const RunRequest& request);
  // The job in `job_dir`. Throws Error(Usage) when the folder holds no job.
  static Job open(const std::string& job_dir);

  const std::string& dir() const;
  // The request the folder was created with (as saved in job.json).
  const RunRequest& request() const;
  JobStatus status() const;

  // Processes the selected segments that are not finished yet, then returns; assembles nothing.
  // progress and cancel as for run().
  JobStatus work(const WorkRequest& work = {}, const std::function<void(const Progress&)>& progress = {},
                 const std::function<bool()>& cancel = {});

  // Joins the finished segments into the output with the source's audio, subtitles, chapters
  // and metadata; with wait_s > 0 first waits that long for other workers to finish theirs.
  // Returns the output's path. Throws Error(Usage) when segments are missing (after the wait)
  // or the output exists without overwrite.
  std::string assemble(bool overwrite = false, int wait_s = 0);

  ~Job();
  Job(Job&&) noexcept;
  Job& operator=(Job&&) noexcept;

 private:
  struct Impl;
  explicit Job(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace framelift
