#include "library/installed_model.h"

#include <algorithm>

#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::library {

fs::path InstalledModel::main_file() const {
  for (const ModelFile& f : files)
    if (fs::path(f.name).extension() == ".param") return dir / f.name;
  return files.empty() ? dir : dir / files.front().name;
}

bool InstalledModel::same_files(const std::vector<ModelFile>& other) const {
  auto key = [](std::vector<ModelFile> v) {
    std::vector<std::pair<std::string, std::string>> k;
    for (auto& f : v) k.emplace_back(f.name, f.sha256);
    std::sort(k.begin(), k.end());
    return k;
  };
  return key(files) == key(other);
}

InstalledModel manifest_for(const CatalogModel& model, std::string source) {
  InstalledModel m;
  m.name = model.name;
  m.task = model.task;
  m.architecture = model.architecture;
  m.format = model.format;
  m.scale = model.scale;
  m.files = model.files;
  m.source = std::move(source);
  m.from_catalog = true;
  return m;
}

nlohmann::ordered_json manifest_to_json(const InstalledModel& model) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const ModelFile& f : model.files) files.push_back({{"name", f.name}, {"size", f.size}, {"sha256", f.sha256}});
  return {{"schema", 1},
          {"name", model.name},
          {"task", model.task},
          {"architecture", model.architecture},
          {"format", model.format},
          {"scale", model.scale > 0 ? nlohmann::ordered_json(model.scale) : nlohmann::ordered_json(nullptr)},
          {"catalog", model.from_catalog},
          {"source", model.source},
          {"files", files}};
}

InstalledModel manifest_from_json(const nlohmann::json& j, const fs::path& manifest_file) {
  try {
    InstalledModel m;
    m.name = j.at("name").get<std::string>();
    m.task = j.value("task", "");
    m.architecture = j.value("architecture", "");
    m.format = j.value("format", "");
    m.scale = j.contains("scale") && !j.at("scale").is_null() ? j.at("scale").get<int>() : 0;
    m.from_catalog = j.value("catalog", false);
    m.source = j.value("source", "");
    for (const auto& f : j.at("files"))
      m.files.push_back({f.at("name").get<std::string>(), f.at("size").get<std::uint64_t>(), f.at("sha256").get<std::string>()});
    if (m.files.empty()) throw std::runtime_error("no files");
    m.dir = manifest_file.parent_path();
    return m;
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Model, str(manifest_file.string(), ": malformed model manifest (", e.what(), ")"));
  }
}

}  // namespace framelift::library
