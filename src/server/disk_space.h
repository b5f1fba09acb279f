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

class DiskGuard {
 public:
  DiskGuard(std::filesystem::path dir, int64_t min_free) : dir_(std::move(dir)), min_free_(min_free) {}
  // "" when writing `bytes` more, plus the `promised` bytes others are yet to write (uploads in
  // progress), leaves at least the minimum free; else one line saying why not, with the figures.
  // A file system that cannot be asked is not refused (the write itself will say).
  std::string shortage(int64_t bytes = 0, int64_t promised = 0) const;
  int64_t min_free() const { return min_free_; }

 private:
  std::filesystem::path dir_;
  int64_t min_free_;
};

}  // namespace framelift::server
