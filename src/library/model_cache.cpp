#include "library/model_cache.h"
#include "library/verified_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "library/locations.h"
#include "net/sha256.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::library {
namespace {

bool is_bookkeeping(const fs::path& entry) { return entry.filename().string().rfind('.', 0) == 0; }

std::optional<InstalledModel> read_manifest(const fs::path& dir) {
  std::ifstream in(dir / kManifestName);
  if (!in) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  try {
    InstalledModel m = manifest_from_json(j, dir / kManifestName);
    // A manifest copied into another folder describes that other folder's model.
    if (m.name != dir.filename().string()) return std::nullopt;
    return m;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Owns the lock file's descriptor: closing it releases the flock.
struct LockFile {
  int fd;
  explicit LockFile(int f) : fd(f) {}
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;
  ~LockFile() { ::close(fd); }
};

}  // namespace

std::string VerifyProblem::message() const { return str(path.string(), ": model ", model, ": ", problem); }

void check_model_name(const std::string& name) {
  bool printable = std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c != 127; });
  if (name.empty() || name.size() > 128 || name.front() == '.' || name.find('/') != std::string::npos || !printable)
    throw Error(ErrorKind::Usage, str("model name '", name,
                                      "': use letters, digits and -_.+ only (no '/', no leading dot, no spaces)"));
}

ModelCache::ModelCache(fs::path root) : root_(std::move(root)) {}

ModelCache ModelCache::open_default() { return ModelCache(default_cache_root()); }

std::vector<InstalledModel> ModelCache::list() const {
  std::vector<InstalledModel> models;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    if (is_bookkeeping(entry.path()) || !entry.is_directory(ec)) continue;
    if (auto m = read_manifest(entry.path())) models.push_back(std::move(*m));
  }
  std::sort(models.begin(), models.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return models;
}

std::optional<InstalledModel> ModelCache::find(const std::string& name) const {
  if (name.empty() || name.front() == '.' || name.find('/') != std::string::npos) return std::nullopt;
  return read_manifest(model_dir(name));
}

fs::path ModelCache::checked_main_file(const InstalledModel& model) const {
  const VerifiedFiles verified(model.dir);
  for (const ModelFile& f : model.files) {
    std::error_code ec;
    const fs::path file = model.dir / f.name;
    const auto size = fs::file_size(file, ec);
    if (ec)
      throw Error(ErrorKind::Model, str(file.string(), ": file of installed model ", model.name,
                                        " is missing; run `framelift models install ", model.name, "` again"));
    if (size != f.size)
      throw Error(ErrorKind::Model, str(file.string(), ": file of installed model ", model.name, " has ", size,
                                        " bytes, its manifest says ", f.size, "; run `framelift models verify`"));
    if (verified.still_verified(file, f.sha256)) continue;
    const std::string actual = net::sha256_file(file);
    if (actual != f.sha256)
      throw Error(ErrorKind::Model, str(file.string(), ": file of installed model ", model.name,
                                        " does not match its SHA-256 (expected ", f.sha256, ", got ", actual,
                                        "); run `framelift models install ", model.name, "` again"));
    verified.remember(file, actual);
  }
  return model.main_file();
}

std::vector<VerifyProblem> ModelCache::verify(const InstalledModel& model) const {
  std::vector<VerifyProblem> problems;
  for (const ModelFile& f : model.files) {
    const fs::path file = model.dir / f.name;
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec) {
      problems.push_back({model.name, f.name, "file missing", file});
      continue;
    }
    if (size != f.size) {
      problems.push_back({model.name, f.name, str("size ", size, ", expected ", f.size), file});
      continue;
    }
    const std::string actual = net::sha256_file(file);
    if (actual != f.sha256)
      problems.push_back({model.name, f.name, str("SHA-256 mismatch (expected ", f.sha256, ", got ", actual, ")"), file});
  }
  return problems;
}

std::vector<VerifyProblem> ModelCache::damaged_folders() const {
  std::vector<VerifyProblem> problems;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    if (is_bookkeeping(entry.path()) || !entry.is_directory(ec)) continue;
    if (!read_manifest(entry.path()))
      problems.push_back({entry.path().filename().string(), "", str("no readable ", kManifestName, "; not a usable model"),
                          entry.path()});
  }
  return problems;
}

void ModelCache::remove(const std::string& name) {
  check_model_name(name);
  auto held = lock();
  const fs::path dir = model_dir(name);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(ErrorKind::Model, str("model '", name, "': not installed in ", root_.string()));
  const fs::path doomed = root_ / str(".removing-", name, "-", ::getpid());
  fs::rename(dir, doomed, ec);
  if (ec) throw Error(ErrorKind::Output, str(dir.string(), ": cannot remove (", ec.message(), ")"));
  fs::remove_all(doomed, ec);
  if (ec) log::warn(doomed.string(), ": left behind (", ec.message(), "); it is ignored and cleared by the next install");
}

std::shared_ptr<void> ModelCache::lock() {
  if (auto held = lock_.lock()) return held;
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) throw Error(ErrorKind::Output, str(root_.string(), ": cannot create the model folder (", ec.message(), ")"));
  const fs::path file = root_ / ".lock";
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(ErrorKind::Output, str(file.string(), ": cannot open (", std::strerror(errno), ")"));
  auto handle = std::make_shared<LockFile>(fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0)
    throw Error(ErrorKind::Resource, str(root_.string(), ": another framelift is installing or removing models here; try again when it is done"));
  // Holding the lock, nothing else is writing: any staging or removal folder is a crash's leftover.
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    const std::string n = entry.path().filename().string();
    if (n.rfind(".staging-", 0) == 0 || n.rfind(".removing-", 0) == 0) {
      std::error_code rm;
      fs::remove_all(entry.path(), rm);
      log::debug(entry.path().string(), ": cleared a leftover of an interrupted install");
    }
  }
  lock_ = handle;
  return handle;
}

}  // namespace framelift::library
