// `framelift models list`: the catalog and what is installed, as a table or as JSON.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "library/model_locator.h"
#include "cli/models_actions.h"
#include "library/catalog.h"
#include "library/model_cache.h"
#include "models/model_files.h"
#include "util/str.h"

namespace framelift::cli {
namespace {

struct Row {
  std::string name, task, architecture, format, content, license, description, source;
  int scale = 0;
  bool catalog = false;
  std::optional<library::InstalledModel> installed;
};

std::vector<Row> rows(const library::Catalog& catalog, const library::ModelCache& cache, bool installed_only) {
  std::map<std::string, Row> by_name;
  if (!installed_only)
    for (const auto& m : catalog.models())
      by_name[m.name] = Row{m.name, m.task, m.architecture, m.format, m.content, m.license, m.description, "", m.scale, true, {}};
  for (const auto& m : cache.list()) {
    Row& r = by_name[m.name];
    if (const auto* known = catalog.find(m.name))
      r = Row{known->name, known->task, known->architecture, known->format, known->content, known->license,
              known->description, "", known->scale, true, {}};
    else
      r = Row{m.name, m.task, m.architecture, m.format, "", "", "", "", m.scale, false, {}};
    r.source = m.source;
    r.installed = m;
  }
  std::vector<Row> out;
  for (auto& [name, row] : by_name) out.push_back(std::move(row));
  return out;
}

}  // namespace

int list_models(bool installed_only, bool as_json) {
  const library::Catalog catalog = library::Catalog::load_default();
  const library::ModelCache cache = library::ModelCache::open_default();
  const std::vector<Row> all = rows(catalog, cache, installed_only);
  if (as_json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Row& r : all)
      out.push_back({{"name", r.name},
                     {"task", r.task},
                     {"architecture", r.architecture},
                     {"format", r.format},
                     {"scale", r.scale > 0 ? nlohmann::ordered_json(r.scale) : nlohmann::ordered_json(nullptr)},
                     {"content", r.content},
                     {"license", r.license},
                     {"description", r.description},
                     {"catalog", r.catalog},
                     {"installed", r.installed.has_value()},
                     {"file", r.installed ? nlohmann::ordered_json(r.installed->main_file().string()) : nlohmann::ordered_json(nullptr)},
                     {"source", r.source}});
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%-34s %-12s %-6s %-16s %s\n", "NAME", "TASK", "SCALE", "ARCHITECTURE", "STATUS");
  for (const Row& r : all) {
    const std::string status = !r.installed ? "-" : r.catalog ? "installed" : str("installed (", r.source, ")");
    std::printf("%-34s %-12s %-6s %-16s %s\n", r.name.c_str(), r.task.c_str(), r.scale > 0 ? str(r.scale, "x").c_str() : "-",
                r.architecture.c_str(), status.c_str());
  }
  std::printf("\nInstalled models live in %s (FRAMELIFT_MODELS).\n", cache.root().string().c_str());
  if (!installed_only) {
    // Files on the model path are usable with -m too, without being installed.
    std::string path_names;
    for (const std::string& n : library::available_model_names())
      if (!catalog.find(n) && !cache.find(n)) path_names += (path_names.empty() ? "" : " ") + n;
    if (!path_names.empty()) std::printf("Also found on the model path (-m NAME): %s\n", path_names.c_str());
    std::printf("Install with `framelift models install NAME`, or import your own file with `framelift models import FILE`.\n");
  }
  return 0;
}

}  // namespace framelift::cli
