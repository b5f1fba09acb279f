#include "cli/job_options.h"

#include "cli/exit_codes.h"
#include "pipeline/batch_runner.h"
#include "pipeline/job_runner.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::cli {

void add_job_options(CLI::App* cmd, JobArgs& a, bool with_run_flags) {
  auto* g = "Jobs (resume, shards, workers; see docs/jobs.md)";
  cmd->add_option("--job-dir", a.job_dir, "Job folder: segments and journal (default: OUTPUT.framelift-job, removed when done)")
      ->group(g);
  if (with_run_flags) {
    cmd->add_option("--segment-frames", a.segment_frames, "Input frames per segment (default: about 10 s)")->group(g);
    cmd->add_flag("--restart", a.restart, "Discard a job folder that holds a different job and start over")->group(g);
    cmd->add_flag("--prepare", a.prepare, "Write the job folder (spec and segment plan) and stop; for `framelift deploy`")->group(g);
    cmd->add_flag("--no-job", a.no_job, "One pass without segments or resume (e.g. output to a pipe)")->group(g);
  }
  cmd->add_flag("--no-assemble", a.no_assemble, "Do not assemble the output at the end (workers of a larger job)")->group(g);
  cmd->add_flag("--keep-job", a.keep_job, "Keep the job folder after the output is assembled")->group(g);
  cmd->add_flag("--cold-segments", a.cold_segments,
                "Build the pipeline afresh for every segment (the reference path; default: once per worker)")
      ->group(g);
  cmd->add_option("--shard", a.shard, "Process shard K of N (K/N, 0-based; auto/N: K from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)")
      ->group(g);
  cmd->add_option("--segments", a.segments, "Process only segments A-B (0-based, inclusive)")->group(g);
  cmd->add_option("--devices", a.devices, "One worker per device over the same segments: cuda:0,cuda:1,...")->group(g);
  cmd->add_option("--claim-timeout", a.claim_timeout_s, "Seconds without heartbeat after which a worker's segment is taken over")
      ->capture_default_str()
      ->group(g);
  auto* l = "Rented machines (see docs/lifecycle.md)";
  cmd->add_option("--watch-preemption", a.watch_preemption,
                  "Stop cleanly on a spot/preemption notice: aws, gcp, azure, auto or off")
      ->capture_default_str()
      ->group(l);
  cmd->add_option("--on-complete", a.on_complete, "Shell command run when the job is done (FRAMELIFT_OUTPUT, FRAMELIFT_STATUS, ...)")
      ->group(l);
  cmd->add_option("--on-fail", a.on_fail, "Shell command run when the job fails or is stopped")->group(l);
  cmd->add_flag("--shutdown-when-done", a.shutdown_when_done, "Shut the machine down once the output is assembled and verified")
      ->group(l);
  cmd->add_option("--shutdown-command", a.shutdown_command,
                  "How to shut down (default $FRAMELIFT_SHUTDOWN_COMMAND, else `shutdown -h now`)")
      ->group(l);
  cmd->add_option("--hourly-price", a.hourly_price, "USD per hour of this machine: progress shows money spent and projected")
      ->group(l);
}

namespace {

pipeline::JobOptions job_options_from(const pipeline::RunOptions& run, const JobArgs& a) {
  pipeline::JobOptions o;
  o.run = run;
  o.job_dir = a.job_dir;
  o.segment_frames = a.segment_frames;
  o.restart = a.restart;
  o.prepare_only = a.prepare;
  o.assemble = !a.no_assemble;
  o.keep_job_dir = a.keep_job;
  o.warm_segments = !a.cold_segments;
  o.progress = run.progress;
  o.framelift_version = FRAMELIFT_VERSION;
  o.claim_stale_after = std::chrono::seconds(std::max(5, a.claim_timeout_s));
  o.lifecycle.watch_preemption = lifecycle::parse_watch_provider(a.watch_preemption);
  o.lifecycle.on_complete = a.on_complete;
  o.lifecycle.on_fail = a.on_fail;
  o.lifecycle.shutdown_when_done = a.shutdown_when_done;
  o.lifecycle.shutdown_command = a.shutdown_command;
  if (!a.hourly_price.empty()) o.lifecycle.hourly_price = lifecycle::parse_hourly_price(a.hourly_price);
  if (!a.shard.empty() && !a.segments.empty()) throw Error(ErrorKind::Usage, "give --shard or --segments, not both");
  if (!a.shard.empty()) o.selection = jobs::parse_shard(a.shard);
  if (!a.segments.empty()) o.selection = jobs::parse_segment_range(a.segments);
  // A worker of a larger job leaves assembling to the assemble step.
  if (o.selection.sharded()) o.assemble = false;
  for (size_t start = 0; start < a.devices.size();) {
    const size_t comma = a.devices.find(',', start);
    const std::string device = a.devices.substr(start, comma - start);
    if (!device.empty()) o.devices.push_back(device);
    start = comma == std::string::npos ? a.devices.size() : comma + 1;
  }
  return o;
}

int run_batch(const pipeline::JobOptions& o) {
  if (!o.job_dir.empty() || o.selection.sharded() || o.prepare_only)
    throw Error(ErrorKind::Usage, "a batch (-i FOLDER or LIST) takes no --job-dir, --shard, --segments or --prepare");
  const pipeline::BatchReport report = pipeline::run_batch(o, pipeline::batch_inputs(o.run.input), o.run.output);
  log::info("batch: ", report.done, " done, ", report.failed, " failed; summary in ", report.summary.string());
  return report.failed ? exit_code(ErrorKind::Input) : 0;
}

}  // namespace

int run_as_job(const pipeline::RunOptions& run, const JobArgs& a) {
  const pipeline::JobOptions o = job_options_from(run, a);
  if (pipeline::is_batch_input(run.input)) return run_batch(o);
  const pipeline::JobReport report = pipeline::run_job(o);
  if (report.decode_errors) log::warn(run.input, ": ", report.decode_errors, " corrupt frame(s) or packet(s) were skipped");
  log::info(report.summary());
  if (!o.prepare_only && report.remaining > 0 && !o.selection.sharded())
    log::info("segments remain; when they are done: framelift assemble --job-dir ", report.job_dir.string());
  return 0;
}

}  // namespace framelift::cli
