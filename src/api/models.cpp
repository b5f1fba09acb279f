#include <framelift/models.h>

#include <map>

#include "api/install_result.h"
#include "library/catalog.h"
#include "library/install.h"
#include "library/model_cache.h"

namespace framelift {
namespace {

ModelEntry from_catalog(const library::CatalogModel& m) {
  ModelEntry e;
  e.name = m.name;
  e.task = m.task;
  e.architecture = m.architecture;
  e.format = m.format;
  e.scale = m.scale;
  e.content = m.content;
  e.license = m.license;
  e.description = m.description;
  e.in_catalog = true;
  return e;
}

}  // namespace

std::vector<ModelEntry> list_models(bool installed_only) {
  const library::Catalog catalog = library::Catalog::load_default();
  const library::ModelCache cache = library::ModelCache::open_default();
  std::map<std::string, ModelEntry> by_name;  // sorted by name
  if (!installed_only)
    for (const auto& m : catalog.models()) by_name[m.name] = from_catalog(m);
  for (const auto& m : cache.list()) {
    ModelEntry& e = by_name[m.name];
    // The catalog's description of a catalog model, the manifest's of one imported from a file.
    if (const auto* known = catalog.find(m.name)) {
      e = from_catalog(*known);
    } else {
      e = ModelEntry();
      e.name = m.name;
      e.task = m.task;
      e.architecture = m.architecture;
      e.format = m.format;
      e.scale = m.scale;
    }
    e.installed = true;
    e.file = m.main_file().string();
    e.source = m.source;
  }
  std::vector<ModelEntry> out;
  for (auto& [name, entry] : by_name) out.push_back(std::move(entry));
  return out;
}

ModelInstallResult install_models(const std::vector<std::string>& names, const ModelInstallOptions& options) {
  library::ModelCache cache = library::ModelCache::open_default();
  library::InstallOptions o;
  o.from_dir = options.from_dir;
  o.download = options.download;
  return api::install_result(library::install_models(cache, library::Catalog::load_default(), names, o));
}

}  // namespace framelift

namespace framelift::api {

ModelInstallResult install_result(library::InstallReport&& r) {
  ModelInstallResult out;
  for (const auto& m : r.installed) {
    out.installed.push_back(m.name);
    out.sources.push_back(m.source);
  }
  out.unchanged = std::move(r.unchanged);
  for (auto& p : r.problems) out.problems.push_back({p.kind, std::move(p.message)});
  out.notes = std::move(r.notes);
  return out;
}

}  // namespace framelift::api
