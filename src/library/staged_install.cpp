#include "library/staged_install.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "net/sha256.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::library {
namespace {

void sync_path(const fs::path& path, bool directory) {
  int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::Output, str(path.string(), ": cannot open to sync (", std::strerror(errno), ")"));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  // Some filesystems refuse fsync on folders (EINVAL); the files themselves were synced.
  if (rc != 0 && !(directory && err == EINVAL))
    throw Error(ErrorKind::Output, str(path.string(), ": sync failed (", std::strerror(err), ")"));
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// A full disk found half-way through a file would fail as a write error on a hidden staging file,
// and an installer trying its next source would report that source instead; asked first, it is
// the cache's own error. Filesystems that cannot say how much is free are not held to it.
void check_free_space(const fs::path& root, const std::string& name, const std::vector<ModelFile>& files) {
  std::uint64_t needed = 0;
  for (const ModelFile& f : files) needed += f.size;
  std::error_code ec;
  const fs::space_info space = fs::space(root, ec);
  if (ec || space.available >= needed) return;
  throw Error(ErrorKind::Output, str(root.string(), ": not enough free space for model ", name, " (needs ", needed,
                                     " bytes, ", space.available, " free)"));
}

}  // namespace

StagedInstall::StagedInstall(ModelCache& cache, const std::string& name, const std::vector<ModelFile>& files)
    : cache_(cache), name_(name) {
  check_model_name(name);
  lock_ = cache.lock();
  check_free_space(cache.root(), name, files);
  std::string pattern = (cache.root() / str(".staging-", name, "-XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw Error(ErrorKind::Output, str(pattern, ": cannot create a staging folder (", std::strerror(errno), ")"));
  dir_ = buf.data();
}

StagedInstall::~StagedInstall() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

fs::path StagedInstall::file(const std::string& file_name) const {
  if (file_name.empty() || file_name.front() == '.' || file_name.find('/') != std::string::npos || file_name == kManifestName)
    throw Error(ErrorKind::Model, str("model ", name_, ": file name '", file_name, "' cannot be stored"));
  return dir_ / file_name;
}

InstalledModel StagedInstall::commit(InstalledModel manifest) {
  if (committed_) throw Error(ErrorKind::Internal, str("model ", name_, ": committed twice"));
  manifest.name = name_;
  std::set<std::string> expected;
  for (const ModelFile& f : manifest.files) {
    const fs::path path = file(f.name);
    expected.insert(f.name);
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) throw Error(ErrorKind::Model, str(path.filename().string(), ": missing from the install of ", name_));
    const std::string actual = net::sha256_file(path);
    if (size != f.size || actual != f.sha256)
      throw Error(ErrorKind::Model, str(f.name, ": SHA-256 mismatch for model ", name_, " (expected ", f.sha256, ", ",
                                        f.size, " bytes; got ", actual, ", ", size, " bytes); not installed"));
    sync_path(path, false);
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec))
    if (!expected.count(entry.path().filename().string())) fs::remove_all(entry.path(), ec);
  write_file_atomic(dir_ / kManifestName, manifest_to_json(manifest).dump(2) + "\n");
  sync_path(dir_, true);

  const fs::path final_dir = cache_.model_dir(name_);
  if (fs::exists(final_dir, ec)) {
    // Swap in one step, so `-m NAME` sees either the old model or the new one, never neither.
    if (::renameat2(AT_FDCWD, dir_.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_EXCHANGE) != 0)
      throw Error(ErrorKind::Output, str(final_dir.string(), ": cannot replace the installed model (",
                                         std::strerror(errno), ")"));
    fs::remove_all(dir_, ec);  // now the old model
  } else {
    fs::rename(dir_, final_dir, ec);
    if (ec) throw Error(ErrorKind::Output, str(final_dir.string(), ": cannot rename into place (", ec.message(), ")"));
  }
  committed_ = true;
  sync_path(cache_.root(), true);
  manifest.dir = final_dir;
  return manifest;
}

std::string copy_and_hash(const fs::path& from, const fs::path& to) {
  FilePtr in(std::fopen(from.c_str(), "rb"));
  if (!in) throw Error(ErrorKind::Input, str(from.string(), ": cannot read (", std::strerror(errno), ")"));
  FilePtr out(std::fopen(to.c_str(), "wb"));
  if (!out) throw Error(ErrorKind::Output, str(to.string(), ": cannot write (", std::strerror(errno), ")"));
  net::Sha256 hash;
  std::vector<char> buf(1 << 20);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), in.get())) > 0) {
    hash.update(buf.data(), n);
    if (std::fwrite(buf.data(), 1, n, out.get()) != n)
      throw Error(ErrorKind::Output, str(to.string(), ": write failed (", std::strerror(errno), ")"));
  }
  if (std::ferror(in.get())) throw Error(ErrorKind::Input, str(from.string(), ": read failed"));
  if (std::fflush(out.get()) != 0) throw Error(ErrorKind::Output, str(to.string(), ": write failed (", std::strerror(errno), ")"));
  return hash.hex();
}

}  // namespace framelift::library
