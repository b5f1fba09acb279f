#include "util/fs.h"

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "util/crash_point.h"
#include "util/disk_space.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift {
namespace {

// Errors name `for_file`, the file the user knows (the final name, not its temporary one).
void fsync_path(const fs::path& path, int flags, const fs::path& for_file) {
  const std::string what = flags & O_DIRECTORY ? str(for_file.string(), ": syncing its folder ", path.string())
                                               : str(for_file.string(), ": syncing ", path.string());
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::Output, str(what, " failed (cannot open it: ", std::strerror(errno), ")"));
  int ret = ::fsync(fd);
  int err = errno;
  if (int injected = failure_point("fsync")) ret = -1, err = injected;
  ::close(fd);
  // Folders on some filesystems refuse fsync (EINVAL); the data itself was synced already.
  if (ret < 0 && !(flags & O_DIRECTORY && err == EINVAL))
    throw Error(ErrorKind::Output, str(what, " failed (", write_error_text(err), ")"));
}

}  // namespace

fs::path partial_path_for(const fs::path& final_path) {
  fs::path dir = final_path.parent_path();
  return dir / str(".", final_path.stem().string(), ".partial-", ::getpid(), final_path.extension().string());
}

int remove_orphaned_partials(const fs::path& final_path) {
  const fs::path dir = final_path.parent_path().empty() ? fs::path(".") : final_path.parent_path();
  const std::string prefix = str(".", final_path.stem().string(), ".partial-");
  const std::string suffix = final_path.extension().string();
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string pid_text = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = pid_t(std::stol(pid_text));
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    removed += fs::remove(entry.path(), ec) ? 1 : 0;
  }
  return removed;
}

void commit_file(const fs::path& temp, const fs::path& final_path) {
  fsync_path(temp, O_RDONLY, final_path);
  crash_point("commit");
  std::error_code ec;
  if (int injected = failure_point("rename")) ec = std::error_code(injected, std::generic_category());
  else fs::rename(temp, final_path, ec);
  if (ec) throw Error(ErrorKind::Output, str(final_path.string(), ": cannot rename into place (", write_error_text(ec.value()), ")"));
  crash_point("committed");
  fs::path dir = final_path.parent_path();
  fsync_path(dir.empty() ? fs::path(".") : dir, O_RDONLY | O_DIRECTORY, final_path);
}

namespace {

void fsync_parent(const fs::path& file) {
  const fs::path dir = file.parent_path();
  fsync_path(dir.empty() ? fs::path(".") : dir, O_RDONLY | O_DIRECTORY, file);
}

// rename without replacing: 0, or errno (EEXIST when the name is taken).
int rename_no_replace(const fs::path& from, const fs::path& to) {
  if (int injected = failure_point("rename")) return injected;
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  // Filesystems without RENAME_NOREPLACE (some network ones): link fails on an existing name too.
  if (::link(from.c_str(), to.c_str()) != 0) return errno;
  ::unlink(from.c_str());
  return 0;
}

}  // namespace

bool commit_file_no_replace(const fs::path& temp, const fs::path& final_path) {
  fsync_path(temp, O_RDONLY, final_path);
  crash_point("commit");
  const int err = rename_no_replace(temp, final_path);
  if (err == EEXIST) return false;
  if (err != 0)
    throw Error(ErrorKind::Output, str(final_path.string(), ": cannot rename into place (", write_error_text(err), ")"));
  crash_point("committed");
  fsync_parent(final_path);
  return true;
}

fs::path commit_file_aside(const fs::path& temp, const fs::path& final_path) {
  for (int n = 1; n < 1000; ++n) {
    const fs::path aside = final_path.parent_path() /
                           str(final_path.stem().string(), ".framelift-", n, final_path.extension().string());
    if (commit_file_no_replace(temp, aside)) return aside;
  }
  throw Error(ErrorKind::Output, str(final_path.string(), ": no free name next to it to keep the result under"));
}

std::optional<FileIdentity> file_identity(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino)};
}

namespace {

// Writes `content` to a fresh temporary file next to `path` and returns its name.
fs::path write_temp(const fs::path& path, std::string_view content) {
  fs::path temp = partial_path_for(path);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(ErrorKind::Output, str(path.string(), ": cannot write (", write_error_text(errno), ")"));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (int injected = failure_point("write")) n = -1, errno = injected;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      throw Error(ErrorKind::Output, str(path.string(), ": write failed (", write_error_text(err), ")"));
    }
    done += size_t(n);
  }
  ::close(fd);
  return temp;
}

}  // namespace

void write_file_atomic(const fs::path& path, std::string_view content) { commit_file(write_temp(path, content), path); }

bool write_file_no_replace(const fs::path& path, std::string_view content) {
  const fs::path temp = write_temp(path, content);
  if (commit_file_no_replace(temp, path)) return true;
  ::unlink(temp.c_str());
  return false;
}

bool path_within(const fs::path& path, const fs::path& root) {
  return std::mismatch(root.begin(), root.end(), path.begin(), path.end()).first == root.end();
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

}  // namespace framelift
