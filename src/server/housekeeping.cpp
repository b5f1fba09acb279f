#include "server/housekeeping.h"

#include <string>

#include "server/store.h"
#include "server/workers.h"
#include "util/log.h"

namespace framelift::server {
namespace fs = std::filesystem;

int remove_done_job_folders(Store& store, const fs::path& data_dir) {
  std::error_code ec;
  int removed = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(data_dir / "jobs", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.size() > 18 || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::optional<JobRecord> job = store.job(std::stoll(name));
    if (!job || job->state != JobState::Done) continue;
    std::error_code rm;
    fs::remove_all(Workers::job_dir(data_dir, job->id), rm);
    if (rm) log::warn("serve: job ", job->id, ": cannot remove its job folder: ", rm.message());
    else ++removed;
  }
  return removed;
}

}  // namespace framelift::server
