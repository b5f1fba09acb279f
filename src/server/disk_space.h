#pragma once
// The free space the server keeps on its data folder's file system (--min-free-bytes): uploads,
// new jobs and running jobs stop before the disk fills, rather than a full disk failing the
// database, a half-written segment or another user's upload.
//
// Thread-safety: const members may be called from any thread.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

namespace framelift::server {

// Bytes an unprivileged process may still write on the file system holding `path` (statvfs:
// f_bavail * f_frsize); -1 when it cannot be asked.
int64_t free_bytes(const std::filesystem::path& path);

class DiskGuard {
 public:
  DiskGuard(std::filesystem::path dir, int64_t min_free) : dir_(std::move(dir)), min_free_(min_free) {}
  // "" when writing `bytes` more leaves at least the minimum free; else one line saying why not.
  // A file system that cannot be asked is not refused (the write itself will say).
  std::string shortage(int64_t bytes = 0) const;
  int64_t min_free() const { return min_free_; }

 private:
  std::filesystem::path dir_;
  int64_t min_free_;
};

}  // namespace framelift::server
