#pragma once
// Running a prepared job folder (`framelift run ... --prepare`, or Job::create) on a cluster: a
// Slurm job array with an assembly job after it, or a Kubernetes Indexed Job with an assembly
// Job. What `framelift deploy slurm|k8s` writes, for programs that submit jobs themselves.
//
// Usage:
//
//   framelift::SlurmDeployRequest q;
//   q.job_dir = "/shared/job";
//   q.workers = 8;
//   q.partition = "gpu";
//   framelift::DeployResult r = framelift::deploy_slurm(q);
//   // r.files: D/deploy/slurm/{array.sbatch,assemble.sbatch,submit.sh}; r.command: submit.sh
//
// Worker K runs `framelift resume --job-dir D --shard K/N --no-assemble`; the assembly runs
// `framelift assemble --job-dir D` once every segment is done (docs/jobs.md). The job folder,
// the input and the output must be on storage every worker mounts at the same path.
//
// Errors: throw framelift::Error: Input when the folder holds no prepared job, Usage for a bad
// option (messages name the CLI's flag: "--mount-path: ..."), Output when a file cannot be
// written. Files are written each atomically (temporary name, fsync, rename), so a half-written
// script is never submitted.
// Warnings that do not stop the deployment (a relative input, more workers than segments) go to
// framelift's log on stderr, as the library's other warnings do, and into DeployResult::warnings.
// Thread-safety: the functions may run from several threads for different job folders.
#include <string>
#include <vector>

namespace framelift {

struct SlurmDeployRequest {
  std::string job_dir;            // the prepared job folder; relative: from the current folder
  int workers = 0;                // array tasks, one shard each; required (>= 1)
  std::string framelift;          // framelift on the nodes; "": the running program (/proc/self/exe)
  std::string container;          // "": none; else run framelift from this Apptainer image (not with framelift)
  std::string partition;          // "": the cluster's default partition
  int gpus = 1;                   // per task, as --gres=gpu[:TYPE]:N; 0: no GPU
  std::string gpu_type;           // "a100"; "": any type
  std::string time_limit = "04:00:00";  // per task, in any sbatch --time format
  std::string memory;             // --mem per task, "32G"; "": the partition's default
  int cpus = 0;                   // --cpus-per-task; 0: the partition's default
  int max_running = 0;            // at most this many tasks at once; 0: no cap
  std::vector<std::string> extra; // more #SBATCH options for both jobs, "--account=vfx"
  std::string job_name;           // "": framelift-FOLDER
};

struct K8sDeployRequest {
  std::string job_dir;            // the prepared job folder; relative: from the current folder
  int workers = 0;                // indexes, one shard each; required (>= 1)
  std::string image;              // container image with framelift; required
  std::string framelift = "framelift";  // the program inside the image
  std::string namespace_name;     // "": kubectl's current namespace
  std::string pvc;                // the shared (ReadWriteMany) claim; required
  std::string mount_path;         // where pods mount the claim; "": the folder holding job, input and output
  int gpus = 1;                   // per worker pod; 0: no GPU
  std::string gpu_resource = "nvidia.com/gpu";
  std::string cpu, memory;        // per worker pod, requested and limit ("8", "32Gi"); "": none
  int retries = 3;                // failed pods tolerated per worker index
  int assemble_wait_s = 7 * 24 * 3600;  // how long the assembly Job waits for the workers
  std::string name;               // "": framelift-FOLDER
};

struct DeployResult {
  std::vector<std::string> files;     // written, absolute paths, in the order written
  std::string command;                // how to start it, shell-quoted: submit.sh, or kubectl apply -f ...
  std::vector<std::string> warnings;  // also logged; see above
};

DeployResult deploy_slurm(const SlurmDeployRequest& request);
DeployResult deploy_k8s(const K8sDeployRequest& request);

}  // namespace framelift
