#pragma once
// One `framelift serve` per data folder: a POSIX record lock on DATA/server.lock, held for the
// server's lifetime and released by the kernel when the process ends, however it ends (a SIGKILL
// leaves no stale lock to clean up). Two servers on one folder would each requeue and run the
// other's running jobs at the same time, writing the same segments; the second one is refused
// before it opens the queue.
//
// The file also holds the holder's pid as text, for people; the lock itself is what counts.
// `serve token` commands take no lock: they are meant to run beside a live server.
//
// Thread-safety: construct and destroy on one thread.
#include <filesystem>

namespace framelift::server {

class DataLock {
 public:
  // Takes the lock or throws Error(Resource) naming the folder and the holder's pid (exit 6);
  // Error(Output) when the lock file cannot be created.
  explicit DataLock(const std::filesystem::path& data_dir);
  ~DataLock();
  DataLock(const DataLock&) = delete;
  DataLock& operator=(const DataLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace framelift::server
