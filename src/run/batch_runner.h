#pragma once
// Many inputs, one command: `-i FOLDER` (its videos, by name) or `-i LIST.txt` (one path per line,
// relative to the list; # comments) with `-o FOLDER`. Each input is its own job (resumable,
// segmented as usual) writing FOLDER/<name>.mkv; a failed input is recorded with its reason and
// the batch goes on. FOLDER/framelift-batch.json (rewritten atomically after every input) says
// what is done, what failed and why, and what remains; rerunning the command skips finished
// outputs and resumes the interrupted one.
#include <filesystem>
#include <string>
#include <vector>

#include "run/job_runner.h"

namespace framelift::pipeline {

// Whether `input` names a batch (a folder, or a .txt/.list file) rather than one video.
bool is_batch_input(const std::string& input);

// The inputs of a batch. Throws Error(Input) for an empty or unreadable folder or list.
std::vector<std::string> batch_inputs(const std::string& input);

struct BatchReport {
  int done = 0, failed = 0, remaining = 0;
  std::filesystem::path summary;
};

// Runs `job` (its run.input and run.output are replaced per input) for every input into
// `out_dir`. Throws Error(Interrupted) when stopped (the summary lists what remains).
BatchReport run_batch(const JobOptions& job, const std::vector<std::string>& inputs, const std::filesystem::path& out_dir);

}  // namespace framelift::pipeline
