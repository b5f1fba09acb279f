#include "jobs/claims.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <csignal>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::jobs {
namespace {

std::string holder_text(const fs::path& lock) {
  std::ifstream in(lock);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string hostname() {
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  return host;
}

// A claim made on this machine by a process that no longer exists (killed, crashed): stale at
// once, so that rerunning a killed job does not wait out the heartbeat timeout.
bool holder_is_dead_here(const std::string& holder) {
  const size_t a = holder.find(':'), b = holder.find(':', a + 1);
  if (a == std::string::npos || b == std::string::npos || holder.substr(0, a) != hostname()) return false;
  const pid_t pid = pid_t(std::atol(holder.substr(a + 1, b - a - 1).c_str()));
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string make_worker_id() {
  std::random_device rd;
  return str(hostname(), ":", getpid(), ":", std::hex, rd() & 0xffffff);
}

SegmentClaims::SegmentClaims(JobDir dir, std::string worker, std::chrono::seconds stale_after)
    : dir_(std::move(dir)), worker_(std::move(worker)), stale_after_(stale_after) {}

bool SegmentClaims::create(int index) {
  const fs::path lock = dir_.claim_file(index);
  const int fd = ::open(lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw Error(ErrorKind::Output, str(lock.string(), ": cannot create the claim (", std::strerror(errno), ")"));
  }
  const std::string text = worker_ + "\n";
  ssize_t ignored = ::write(fd, text.data(), text.size());
  (void)ignored;
  ::close(fd);
  std::lock_guard guard(mutex_);
  held_.insert(index);
  return true;
}

bool SegmentClaims::try_claim(int index) {
  if (create(index)) return true;
  const fs::path lock = dir_.claim_file(index);
  struct stat st {};
  if (::stat(lock.c_str(), &st) != 0) return create(index);  // released meanwhile
  const auto age = std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(st.st_mtime);
  const std::string previous = holder_text(lock);
  if (age < stale_after_ && !holder_is_dead_here(previous)) return false;
  // Stale: its worker died. Whoever renames it away takes it over; the others' renames fail.
  const fs::path away = lock.string() + ".stale-" + worker_;
  if (::rename(lock.c_str(), away.c_str()) != 0) return false;
  log::info(index == kAssembleClaim ? std::string("assembly") : str("segment ", index), ": taking over from ",
            previous, " (gone; last heartbeat ", std::chrono::duration_cast<std::chrono::seconds>(age).count(), " s ago)");
  std::error_code ec;
  fs::remove(away, ec);
  return create(index);
}

void SegmentClaims::release(int index) {
  {
    std::lock_guard guard(mutex_);
    if (!held_.erase(index)) return;
  }
  // Taken over meanwhile: the lock is the new holder's now.
  if (!holds(index)) return;
  std::error_code ec;
  fs::remove(dir_.claim_file(index), ec);
}

void SegmentClaims::heartbeat() {
  std::lock_guard guard(mutex_);
  for (int index : held_) ::utimensat(AT_FDCWD, dir_.claim_file(index).c_str(), nullptr, 0);
}

bool SegmentClaims::holds(int index) const { return holder_text(dir_.claim_file(index)) == worker_; }

std::string SegmentClaims::holder(int index) const { return holder_text(dir_.claim_file(index)); }

}  // namespace framelift::jobs
