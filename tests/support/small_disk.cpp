#include "support/small_disk.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "support/test_paths.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

bool write_text(const char* file, const std::string& text) {
  std::ofstream out(file);
  return bool(out << text) && bool(out.flush());
}

// Makes this process root of a user and mount namespace of its own, once, so that it may mount a
// tmpfs without being root. "" on success, else why not.
std::string enter_own_namespace() {
  static const std::string result = [] {
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return std::string("unshare: ") + std::strerror(errno);
    write_text("/proc/self/setgroups", "deny");
    if (!write_text("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
        !write_text("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n"))
      return std::string("cannot map the user into the namespace");
    return std::string();
  }();
  return result;
}

std::string size_option(int64_t bytes) { return "size=" + std::to_string(bytes); }

}  // namespace

SmallDisk::SmallDisk(const std::string& tag, int64_t bytes) : dir_(temp_dir(tag)) {
  if (::geteuid() != 0) {
    if (std::string why = enter_own_namespace(); !why.empty()) {
      why_ = "cannot mount a small tmpfs here (not root, and " + why + ")";
      return;
    }
  }
  if (::mount("tmpfs", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, size_option(bytes).c_str()) != 0) {
    why_ = std::string("cannot mount a small tmpfs here: ") + std::strerror(errno);
    return;
  }
  mounted_ = true;
}

SmallDisk::~SmallDisk() {
  if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
}

bool SmallDisk::resize(int64_t bytes) {
  return mounted_ && ::mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT | MS_NOSUID | MS_NODEV, size_option(bytes).c_str()) == 0;
}

bool SmallDisk::make_read_only() {
  return mounted_ && ::mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) == 0;
}

int64_t bytes_under(const fs::path& dir) {
  int64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      const auto size = it->file_size(size_ec);
      if (!size_ec) total += int64_t(size);
    }
  }
  return total;
}

}  // namespace framelift::test
