#pragma once
// Scheduler-side names derived from the job folder, so that `squeue` and `kubectl get jobs` show
// which video a worker belongs to.
#include <filesystem>
#include <string>
#include <string_view>

namespace framelift::deploy {

// "framelift-" + the folder's name, in [A-Za-z0-9._-] (Slurm shows at most 8 characters of it
// by default, the rest is still in `squeue -o %j`).
std::string slurm_job_name(const std::filesystem::path& job_dir);

// An RFC 1123 label: "framelift-" + the folder's name in lower case letters, digits and '-', at
// most 42 characters, so that "-assemble" and the pod suffixes still fit in 63.
std::string k8s_name(const std::filesystem::path& job_dir);

// Throws Error(Usage) unless `name` is such a label of at most 42 characters.
void check_k8s_name(std::string_view name);

}  // namespace framelift::deploy
