#include "server/disk_space.h"

#include <sys/statvfs.h>

#include "util/str.h"

namespace framelift::server {

int64_t free_bytes(const std::filesystem::path& path) {
  struct statvfs s {};
  if (::statvfs(path.c_str(), &s) != 0) return -1;
  return int64_t(s.f_bavail) * int64_t(s.f_frsize);
}

std::string DiskGuard::shortage(int64_t bytes) const {
  if (min_free_ <= 0 && bytes <= 0) return "";
  const int64_t free = free_bytes(dir_);
  if (free < 0 || free - bytes >= min_free_) return "";
  if (bytes > 0)
    return str("the server's disk has ", free, " bytes free; ", bytes, " more would leave less than the ", min_free_,
               " it keeps free (--min-free-bytes)");
  return str("the server's disk has ", free, " bytes free, less than the ", min_free_, " it keeps free (--min-free-bytes)");
}

}  // namespace framelift::server
