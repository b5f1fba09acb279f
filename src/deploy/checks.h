#pragma once
// Checks shared by the generators. Each throws Error(Usage) naming the option and the problem.
#include <filesystem>
#include <string_view>

namespace framelift::deploy {

// The job folder must be absolute (workers start elsewhere) and free of control characters
// (a newline would end a comment or a #SBATCH line early).
void check_job_dir(const std::filesystem::path& job_dir);

void check_workers(int workers);

// A value that goes into one scheduler directive: non-empty, no spaces or control characters.
void check_token(std::string_view option, std::string_view value);

}  // namespace framelift::deploy
