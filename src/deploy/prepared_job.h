#pragma once
// What deployment needs to know about a prepared job folder (`framelift run ... --prepare`):
// read from its job.json and plan.json without depending on the job engine.
#include <filesystem>
#include <string>

namespace framelift::deploy {

struct PreparedJob {
  std::string input;   // as job.json names it: a path (maybe relative) or a URL
  std::string output;  // absolute
  int segments = 0;    // from plan.json; 0 when it is missing or unreadable
};

// Throws Error(Input) when `job_dir` has no job.json (the job was never prepared) or it is not
// a job spec.
PreparedJob read_prepared_job(const std::filesystem::path& job_dir);

// The deepest folder that holds the job folder and the job's local input and output: what a
// container has to mount to see them all at the same paths. `job_dir` must be absolute;
// relative inputs and URLs are left out.
std::filesystem::path shared_folder(const std::filesystem::path& job_dir, const PreparedJob& job);

}  // namespace framelift::deploy
