#include "library/directory_import.h"

#include <algorithm>
#include <map>

#include "library/staged_install.h"
#include "net/sha256.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::library {

InstallReport import_directory(ModelCache& cache, const Catalog& catalog, const fs::path& dir,
                               const std::set<std::string>& only) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(ErrorKind::Input, str(dir.string(), ": not a folder"));
  InstallReport report;
  auto lock = cache.lock();
  std::vector<const CatalogModel*> candidates;
  std::set<std::uint64_t> sizes;  // only files of a size some catalog file has are hashed
  for (const CatalogModel& m : catalog.models()) {
    if (!only.empty() && !only.count(m.name)) continue;
    // Named models already installed need no scan; otherwise "already installed" is only said of
    // models the folder really holds (below).
    if (auto installed = cache.find(m.name); !only.empty() && installed && installed->same_files(m.files)) {
      report.unchanged.push_back(m.name);
      continue;
    }
    candidates.push_back(&m);
    for (const ModelFile& f : m.files) sizes.insert(f.size);
  }
  if (candidates.empty()) return report;

  std::map<std::string, fs::path> by_sha, by_name;
  const fs::path cache_root = fs::weakly_canonical(cache.root(), ec);
  auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) throw Error(ErrorKind::Input, str(dir.string(), ": cannot read (", ec.message(), ")"));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    // The cache itself may sit inside the folder (.deps/models under .deps): not a source.
    if (it->is_directory(ec) && fs::weakly_canonical(it->path(), ec) == cache_root) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || !sizes.count(it->file_size(ec))) continue;
    by_sha.emplace(net::sha256_file(it->path()), it->path());
    by_name.emplace(it->path().filename().string(), it->path());
  }
  // Models share files (Real-CUGAN graphs, the animevideov3 weights): finding a shared file says
  // nothing about whether the folder meant to hold that model.
  std::map<std::string, int> users;
  for (const CatalogModel& m : catalog.models())
    for (const ModelFile& f : m.files) ++users[f.sha256];

  const std::string source = str("folder ", fs::absolute(dir).lexically_normal().string());
  for (const CatalogModel* m : candidates) {
    std::vector<std::string> missing;
    for (const ModelFile& f : m->files)
      if (!by_sha.count(f.sha256)) missing.push_back(f.name);
    if (missing.size() == m->files.size()) {
      if (only.count(m->name))
        report.problems.push_back({ErrorKind::Input, str(dir.string(), ": holds no file of model ", m->name)});
      continue;
    }
    if (!missing.empty()) {
      std::string line = str(dir.string(), ": has part of model ", m->name, " but no file matching ", missing.front(),
                             " (size and SHA-256); not installed");
      if (auto named = by_name.find(missing.front()); named != by_name.end())
        line = str(named->second.string(), ": SHA-256 differs from file ", missing.front(), " of model ", m->name,
                   " (damaged?); not installed");
      bool own_file_found = std::any_of(m->files.begin(), m->files.end(),
                                        [&](const ModelFile& f) { return by_sha.count(f.sha256) && users[f.sha256] == 1; });
      if (only.count(m->name)) report.problems.push_back({ErrorKind::Input, line});
      else if (own_file_found || by_name.count(missing.front())) report.notes.push_back(line);
      continue;
    }
    if (auto installed = cache.find(m->name); installed && installed->same_files(m->files)) {
      report.unchanged.push_back(m->name);
      continue;
    }
    try {
      StagedInstall staging(cache, m->name, m->files);
      for (const ModelFile& f : m->files) copy_and_hash(by_sha.at(f.sha256), staging.file(f.name));
      report.installed.push_back(staging.commit(manifest_for(*m, source)));
    } catch (const Error& e) {
      report.problems.push_back({e.kind(), str(dir.string(), ": ", e.what())});
    }
  }
  return report;
}

}  // namespace framelift::library
