#include "util/disk_space.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace fs = std::filesystem;

namespace framelift {
namespace {

// The words every disk-full message carries, so that says_disk_full recognises its own text.
constexpr std::string_view kDiskFull = "(disk full)";

// `path`, or the nearest folder above it that exists ("." for a relative name without one).
fs::path existing_ancestor(const fs::path& path) {
  std::error_code ec;
  fs::path p = path.empty() ? fs::path(".") : path;
  while (!fs::exists(p, ec)) {
    if (!p.has_parent_path() || p.parent_path() == p) return p.is_absolute() ? p.root_path() : fs::path(".");
    p = p.parent_path();
  }
  return p;
}

}  // namespace

int64_t free_disk_bytes(const fs::path& path) {
  struct statvfs s {};
  if (::statvfs(existing_ancestor(path).c_str(), &s) != 0) return -1;
  return int64_t(s.f_bavail) * int64_t(s.f_frsize);
}

bool same_file_system(const fs::path& a, const fs::path& b) {
  struct stat sa {}, sb {};
  if (::stat(existing_ancestor(a).c_str(), &sa) != 0 || ::stat(existing_ancestor(b).c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev;
}

std::string write_error_text(int err) {
  if (err == ENOSPC) return "no space left on device " + std::string(kDiskFull);
  if (err == EDQUOT) return "disk quota exceeded " + std::string(kDiskFull);
  if (err == EFBIG) return "file too large (disk quota or file size limit reached)";
  return std::strerror(err);
}

bool says_disk_full(std::string_view message) { return message.find(kDiskFull) != std::string_view::npos; }

std::string human_bytes(double bytes) {
  char buf[32];
  if (bytes < 1e6) std::snprintf(buf, sizeof buf, "%.0f kB", bytes / 1e3);
  else if (bytes < 1e9) std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  return buf;
}

}  // namespace framelift
