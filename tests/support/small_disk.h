#pragma once
// A real small file system for disk-full tests: a tmpfs of a chosen size mounted on a fresh
// folder, so that writes fail with the kernel's own ENOSPC where the disk really fills.
//
// Mounting needs root, or else a user and mount namespace of the test process's own (taken once,
// before the process has threads; the framelift processes a test starts inherit it). Where
// neither is allowed, available() is false and why() says so: the test skips.
#include <cstdint>
#include <filesystem>
#include <string>

namespace framelift::test {

class SmallDisk {
 public:
  SmallDisk(const std::string& tag, int64_t bytes);
  ~SmallDisk();
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

  bool available() const { return mounted_; }
  const std::string& why() const { return why_; }
  const std::filesystem::path& dir() const { return dir_; }
  // Grows or shrinks the file system, keeping its files (tmpfs remount).
  bool resize(int64_t bytes);
  // Remounts it read-only: writes fail with EROFS even for root, whom permissions do not stop.
  bool make_read_only();

 private:
  std::filesystem::path dir_;
  bool mounted_ = false;
  std::string why_;
};

// Bytes of every file under `dir`, hidden ones included (what a job holds there).
int64_t bytes_under(const std::filesystem::path& dir);

}  // namespace framelift::test
