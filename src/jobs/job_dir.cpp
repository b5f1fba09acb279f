#include "jobs/job_dir.h"

#include <cstdio>

#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::jobs {

std::string segment_name(int index) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06d", index);
  return buf;
}

JobDir::JobDir(fs::path root) : root_(std::move(root)) {}

fs::path JobDir::default_for(const fs::path& output) {
  fs::path dir = output.parent_path();
  return dir / (output.filename().string() + ".framelift-job");
}

fs::path JobDir::segment_file(int index) const { return root_ / "segments" / (segment_name(index) + ".mkv"); }
fs::path JobDir::record_file(int index) const { return journal_dir() / (segment_name(index) + ".json"); }
fs::path JobDir::claim_file(int index) const {
  return claims_dir() / ((index == kAssembleClaim ? std::string("assemble") : segment_name(index)) + ".lock");
}

bool JobDir::exists() const {
  std::error_code ec;
  return fs::exists(spec_file(), ec);
}

void JobDir::create() const {
  for (const fs::path& p : {root_, root_ / "segments", journal_dir(), claims_dir(), temp_dir()}) {
    std::error_code ec;
    fs::create_directories(p, ec);
    if (ec) throw Error(ErrorKind::Output, str(p.string(), ": cannot create the job folder (", ec.message(), ")"));
  }
}

}  // namespace framelift::jobs
