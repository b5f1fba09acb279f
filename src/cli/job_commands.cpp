// `framelift resume` and `framelift assemble`: a worker or the final step of a job described in
// a job folder (Slurm array tasks, Kubernetes pods, a rerun after a crash without the original
// command line).
#include <chrono>
#include <memory>

#include "cli/commands.h"
#include "cli/job_options.h"
#include "framelift/job.h"
#include "util/log.h"

namespace framelift::cli {

void add_resume_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("resume", "Process the segments of a job folder (a worker; resumes where it stopped)");
  auto a = std::make_shared<JobArgs>();
  auto device = std::make_shared<std::string>();
  auto progress = std::make_shared<std::string>("auto");
  add_job_options(cmd, *a, false);
  cmd->get_option("--job-dir")->required();
  cmd->add_option("--device", *device, "Run on this device (the job's is kept otherwise)");
  cmd->add_option("--progress", *progress, "auto, bar, json, none")->capture_default_str();
  cmd->footer(
      "Examples:\n"
      "  framelift resume --job-dir out.mkv.framelift-job\n"
      "  framelift resume --job-dir /shared/job --shard $SLURM_ARRAY_TASK_ID/8\n"
      "  framelift resume --job-dir /shared/job --shard auto/8   # Kubernetes Indexed Job");
  cmd->callback([=, &selected] {
    selected = [=] {
      // The saved request, with this worker's share, device and hooks; running it resumes.
      RunRequest r = Job::open(a->job_dir).request();
      JobArgs args = *a;
      args.segment_frames = r.segment_frames;
      args.keep_job = true;  // a named folder is the user's
      apply_job_args(args, r);
      if (!device->empty()) r.stage_defaults["device"] = *device;
      r.display = parse_progress_display(*progress);
      return run_request(r);
    };
  });
}

void add_assemble_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("assemble", "Join a job's finished segments into its output, with the source's audio");
  auto dir = std::make_shared<std::string>();
  auto overwrite = std::make_shared<bool>(false);
  auto wait = std::make_shared<int>(0);
  cmd->add_option("--job-dir", *dir, "The job folder")->required();
  cmd->add_flag("-y,--overwrite", *overwrite, "Replace an existing output file");
  cmd->add_option("--wait", *wait, "Wait up to this many seconds for other workers to finish the segments")
      ->expected(0, 1)
      ->default_str("0");
  cmd->callback([=, &selected] {
    selected = [=] {
      const std::string output = Job::open(*dir).assemble(*overwrite, *wait);
      log::info("wrote ", output);
      return 0;
    };
  });
}

}  // namespace framelift::cli
