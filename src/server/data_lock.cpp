#include "server/data_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "util/error.h"
#include "util/str.h"

namespace framelift::server {
namespace {

struct flock whole_file(short type) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = 0;
  l.l_len = 0;  // to the end, however long the file grows
  return l;
}

// Who holds the lock, as the kernel says (F_GETLK): a pid, or "" when it was just released.
std::string holder_of(int fd) {
  struct flock l = whole_file(F_WRLCK);
  if (fcntl(fd, F_GETLK, &l) != 0 || l.l_type == F_UNLCK) return "";
  return std::to_string(l.l_pid);
}

}  // namespace

DataLock::DataLock(const std::filesystem::path& data_dir) {
  const std::filesystem::path file = data_dir / "server.lock";
  // Process-wide record locks (not OFD ones) because F_GETLK then names the holder's pid. They
  // go when any descriptor of the file closes in this process: nothing else here opens it.
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(ErrorKind::Output, str(file.string(), ": cannot create the lock file: ", std::strerror(errno)));
  struct flock l = whole_file(F_WRLCK);
  if (fcntl(fd_, F_SETLK, &l) != 0) {
    const int why = errno;
    const std::string holder = why == EACCES || why == EAGAIN ? holder_of(fd_) : "";
    ::close(fd_);
    fd_ = -1;
    if (why != EACCES && why != EAGAIN)
      throw Error(ErrorKind::Output, str(file.string(), ": cannot lock: ", std::strerror(why)));
    throw Error(ErrorKind::Resource, str(data_dir.string(), ": another framelift serve (pid ", holder.empty() ? "unknown" : holder,
                                         ") uses this data folder; stop it first or give another --data"));
  }
  // The pid is for people reading the file; the lock is what counts, so a failed write is let be.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

DataLock::~DataLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the file stays for the next server
}

}  // namespace framelift::server
