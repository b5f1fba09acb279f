#include "cli/job_options.h"

#include "cli/exit_codes.h"
#include "cli/value_checks.h"
#include "framelift/error.h"
#include "framelift/values.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::cli {

void add_job_options(CLI::App* cmd, JobArgs& a, bool with_run_flags) {
  auto* g = "Jobs (resume, shards, workers; see docs/jobs.md)";
  cmd->add_option("--job-dir", a.job_dir, "Job folder: segments and journal (default: OUTPUT.framelift-job, removed when done)")
      ->group(g);
  if (with_run_flags) {
    cmd->add_option("--segment-frames", a.segment_frames, "Input frames per segment (default: about 10 s)")
        ->check(whole_at_least(1))
        ->group(g);
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

void apply_job_args(const JobArgs& a, RunRequest& r) {
  r.as_job = !a.no_job;
  r.job_dir = a.job_dir;
  r.segment_frames = a.segment_frames;
  r.restart = a.restart;
  r.prepare_only = a.prepare;
  r.assemble = !a.no_assemble;
  r.keep_job_dir = r.keep_job_dir || a.keep_job;
  r.warm_segments = !a.cold_segments;
  // Text only here, at the edge: the request holds the parsed values.
  r.shard = a.shard.empty() ? std::nullopt : std::optional<Shard>(parse_shard(a.shard));
  r.segments = a.segments.empty() ? std::nullopt : std::optional<SegmentRange>(parse_segment_range(a.segments));
  r.claim_timeout_s = a.claim_timeout_s;
  r.devices.clear();
  for (size_t start = 0; start < a.devices.size();) {
    const size_t comma = a.devices.find(',', start);
    r.devices.push_back(a.devices.substr(start, comma - start));
    start = comma == std::string::npos ? a.devices.size() : comma + 1;
  }
  r.lifecycle.watch_preemption = parse_preemption_watch(a.watch_preemption);
  r.lifecycle.on_complete = a.on_complete;
  r.lifecycle.on_fail = a.on_fail;
  r.lifecycle.shutdown_when_done = a.shutdown_when_done;
  r.lifecycle.shutdown_command = a.shutdown_command;
  if (!a.hourly_price.empty()) r.lifecycle.hourly_price = parse_hourly_price(a.hourly_price);
}

ProgressDisplay parse_progress_display(const std::string& text) {
  if (text == "auto") return ProgressDisplay::Auto;
  if (text == "bar") return ProgressDisplay::Bar;
  if (text == "json") return ProgressDisplay::JsonLines;
  if (text == "none") return ProgressDisplay::None;
  throw Error(ErrorKind::Usage, str("--progress: unknown mode '", text, "' (auto, bar, json, none)"));
}

int run_request(const RunRequest& r) {
  if (is_batch_input(r.input)) {
    const BatchResult report = run_batch(r);
    log::info("batch: ", report.done, " done, ", report.failed, " failed; summary in ", report.summary_file);
    return report.failed ? exit_code(ErrorKind::Input) : 0;
  }
  const RunResult report = run(r);
  if (report.decode_errors) log::warn(r.input, ": ", report.decode_errors, " corrupt frame(s) or packet(s) were skipped");
  log::info(report.summary);
  const bool sharded = r.shard || r.segments;
  if (r.as_job && !r.prepare_only && report.segments_remaining > 0 && !sharded)
    log::info("segments remain; when they are done: framelift assemble --job-dir ", report.job_dir);
  return 0;
}

}  // namespace framelift::cli
