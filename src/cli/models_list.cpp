// `framelift models list`: the catalog and what is installed, as a table or as JSON.
#include <framelift/models.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/models_actions.h"
#include "util/str.h"

namespace framelift::cli {

int list_models(bool installed_only, bool as_json) {
  const std::vector<ModelEntry> all = framelift::list_models(installed_only);
  if (as_json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const ModelEntry& r : all)
      out.push_back({{"name", r.name},
                     {"task", r.task},
                     {"architecture", r.architecture},
                     {"format", r.format},
                     {"scale", r.scale > 0 ? nlohmann::ordered_json(r.scale) : nlohmann::ordered_json(nullptr)},
                     {"content", r.content},
                     {"license", r.license},
                     {"description", r.description},
                     {"catalog", r.in_catalog},
                     {"installed", r.installed},
                     {"file", r.installed ? nlohmann::ordered_json(r.file) : nlohmann::ordered_json(nullptr)},
                     {"source", r.source}});
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%-34s %-12s %-6s %-16s %s\n", "NAME", "TASK", "SCALE", "ARCHITECTURE", "STATUS");
  for (const ModelEntry& r : all) {
    const std::string status = !r.installed ? "-" : r.in_catalog ? "installed" : str("installed (", r.source, ")");
    std::printf("%-34s %-12s %-6s %-16s %s\n", r.name.c_str(), r.task.c_str(), r.scale > 0 ? str(r.scale, "x").c_str() : "-",
                r.architecture.c_str(), status.c_str());
  }
  std::printf("\nInstalled models live in %s (FRAMELIFT_MODELS).\n", model_cache_dir().c_str());
  if (!installed_only) {
    // Files on the model path are usable with -m too, without being installed.
    std::string path_names;
    for (const std::string& n : model_path_names())
      if (std::none_of(all.begin(), all.end(), [&](const ModelEntry& e) { return e.name == n; })) path_names += (path_names.empty() ? "" : " ") + n;
    if (!path_names.empty()) std::printf("Also found on the model path (-m NAME): %s\n", path_names.c_str());
    std::printf("Install with `framelift models install NAME`, or import your own file with `framelift models import FILE`.\n");
  }
  return 0;
}

}  // namespace framelift::cli
