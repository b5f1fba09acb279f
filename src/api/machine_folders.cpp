// The disk part of machine_report(): free space and writability of the output folder and of the
// model cache, and what the cache holds.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "api/machine_parts.h"
#include "library/model_cache.h"
#include "util/disk_space.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::api {
namespace {

// Creates and removes a hidden file in `dir`: the one test that sees what a write would (a
// read-only mount, permissions, ACLs, root's exemptions from them). "" when it could, else why not.
std::string write_probe(const fs::path& dir) {
  std::string name = (dir / ".framelift-doctor-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return std::strerror(errno);
  ::close(fd);
  ::unlink(name.c_str());
  return "";
}

// The folder itself, or the nearest one above it that exists (where a first install creates it).
fs::path nearest_existing(fs::path p) {
  std::error_code ec;
  p = fs::absolute(p, ec);
  while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
  return p;
}

}  // namespace

FolderReport check_folder(const std::string& path, bool output) {
  FolderReport f;
  f.path = path;
  std::error_code ec;
  f.exists = fs::is_directory(path, ec);
  const std::string why_not = write_probe(f.exists ? fs::path(path) : nearest_existing(path));
  f.writable = why_not.empty();
  f.free_bytes = free_disk_bytes(path);
  if (!output) return f;
  if (!f.exists)
    f.problem = str(path, fs::exists(path, ec) ? ": not a folder" : ": no such folder");
  else if (!f.writable)
    f.problem = str(path, ": not writable (", why_not, ")");
  else if (f.free_bytes >= 0 && f.free_bytes < kMinOutputFreeBytes)
    f.problem = str(path, ": ", human_bytes(double(f.free_bytes)), " free, under the ", human_bytes(double(kMinOutputFreeBytes)),
                    " a run needs to write its output there");
  return f;
}

ModelCacheReport read_model_cache() {
  ModelCacheReport r;
  const library::ModelCache cache = library::ModelCache::open_default();
  r.folder = check_folder(cache.root().string(), false);
  for (const auto& model : cache.list()) {
    ++r.installed;
    for (const auto& file : model.files) r.bytes += int64_t(file.size);
  }
  return r;
}

}  // namespace framelift::api
