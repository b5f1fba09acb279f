#pragma once
// Kubernetes deployment of a prepared job: an Indexed Job with one pod per shard, and a Job that
// waits for every segment and assembles the output.
//
//   D/deploy/k8s/job.yaml       completions = parallelism = N; pod K runs
//                               `framelift resume --job-dir D --shard K/N --no-assemble`
//   D/deploy/k8s/assemble.yaml  `framelift assemble --job-dir D --wait SECONDS`
//
// Both mount one shared (ReadWriteMany) PersistentVolumeClaim at mount_path, which must hold D
// and the job's input and output at the same paths as where the job was prepared. A failed pod is
// replaced by one with the same index (backoffLimitPerIndex); it skips the segments already done.
#include <filesystem>
#include <string>
#include <vector>

#include "deploy/deploy_file.h"

namespace framelift::deploy {

struct K8sOptions {
  std::filesystem::path job_dir;               // absolute, inside mount_path; required
  int workers = 0;                             // indexes, one shard each; required
  std::string image;                           // container image with framelift; required
  std::string framelift = "framelift";         // the program inside the image
  std::string namespace_name;                  // empty: kubectl's current namespace
  std::string pvc;                             // claim name; required
  std::filesystem::path mount_path;            // where the claim is mounted; required
  int gpus = 1;                                // per worker pod; 0: no GPU
  std::string gpu_resource = "nvidia.com/gpu"; // the extended resource the device plugin offers
  std::string cpu;                             // per worker, requested and limit, e.g. "8"; empty: none
  std::string memory;                          // per worker, requested and limit, e.g. "32Gi"; empty: none
  int retries = 3;                             // failed pods tolerated per index
  int assemble_wait_s = 7 * 24 * 3600;         // how long the assembly waits for the segments
  std::string name;                            // empty: k8s_name(job_dir)
};

// The files for `options`, not yet written (see write_deploy_files). Pure; throws Error(Usage)
// on an invalid option.
std::vector<DeployFile> k8s_files(const K8sOptions& options);

// The folder the files go to: D/deploy/k8s.
std::filesystem::path k8s_dir(const std::filesystem::path& job_dir);

}  // namespace framelift::deploy
