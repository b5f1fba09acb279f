#pragma once
// Slurm deployment of a prepared job: one array task per shard, then one assembly job.
//
//   D/deploy/slurm/array.sbatch     N tasks; task K runs `framelift resume --job-dir D --shard K/N --no-assemble`
//   D/deploy/slurm/assemble.sbatch  `framelift assemble --job-dir D`
//   D/deploy/slurm/submit.sh        queues both, the assembly with afterok on the whole array
//   D/deploy/slurm/logs/            one log per task (appended across requeues)
//
// D must be on storage every node mounts at the same path. A task that is preempted or whose
// node fails is requeued by Slurm (--requeue); one that nears its time limit gets USR1, stops
// framelift (which keeps its finished segments) and requeues itself for the rest.
#include <filesystem>
#include <string>
#include <vector>

#include "deploy/deploy_file.h"

namespace framelift::deploy {

struct SlurmOptions {
  std::filesystem::path job_dir;               // absolute; required
  int workers = 0;                             // array tasks, one shard each; required
  // The command that runs framelift on a node: a path, or a container runner such as
  // {"apptainer", "exec", "--nv", "framelift.sif", "framelift"}.
  std::vector<std::string> framelift = {"framelift"};
  std::string partition;                       // empty: the cluster's default partition
  int gpus = 1;                                // per task, as --gres=gpu[:TYPE]:N; 0: no GPU
  std::string gpu_type;                        // e.g. "a100"; empty: any type
  std::string time_limit = "04:00:00";         // per task, in any sbatch --time format
  std::string memory;                          // --mem per task, e.g. "32G"; empty: partition default
  int cpus = 0;                                // --cpus-per-task; 0: partition default
  int max_running = 0;                         // at most this many tasks at once (--array=...%M); 0: no cap
  std::vector<std::string> extra;              // more #SBATCH options for both jobs, e.g. "--account=vfx"
  std::string job_name;                        // empty: slurm_job_name(job_dir)
};

// The files for `options`, not yet written (see write_deploy_files). Pure; throws Error(Usage)
// on an invalid option.
std::vector<DeployFile> slurm_files(const SlurmOptions& options);

// The folder the files go to: D/deploy/slurm.
std::filesystem::path slurm_dir(const std::filesystem::path& job_dir);

}  // namespace framelift::deploy
