#include "server/disk_space.h"

#include "util/disk_space.h"
#include "util/str.h"

namespace framelift::server {

std::string DiskGuard::shortage(int64_t bytes, int64_t promised) const {
  if (min_free_ <= 0 && bytes + promised <= 0) return "";
  const int64_t free = free_disk_bytes(dir_);
  if (free < 0 || free - bytes - promised >= min_free_) return "";
  const std::string kept = str(" would leave less than the ", min_free_, " it keeps free (--min-free-bytes)");
  if (bytes > 0 && promised > 0)
    return str("the server's disk has ", free, " bytes free; ", bytes, " more and the ", promised,
               " still to arrive for uploads in progress", kept);
  if (bytes > 0) return str("the server's disk has ", free, " bytes free; ", bytes, " more", kept);
  return str("the server's disk has ", free, " bytes free, less than the ", min_free_, " it keeps free (--min-free-bytes)");
}

}  // namespace framelift::server
