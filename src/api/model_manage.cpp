// framelift/models.h: import, verify, remove, describe, --quality, and where models are found.
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "api/install_result.h"
#include "framelift/models.h"
#include "library/catalog.h"
#include "library/directory_import.h"
#include "library/file_import.h"
#include "library/model_cache.h"
#include "library/model_locator.h"
#include "library/npm_import.h"
#include "library/quality.h"
#include "models/model_files.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift {
namespace {

bool is_archive(const fs::path& p) {
  const std::string n = p.filename().string();
  auto ends = [&](const char* s) { return n.size() > std::strlen(s) && n.compare(n.size() - std::strlen(s), std::string::npos, s) == 0; };
  return ends(".tgz") || ends(".tar.gz") || ends(".tar") || ends(".zip");
}

// Architecture and scale of a user's file, from the same detection `models info` prints.
library::DetectedModel detect(const fs::path& file) {
  const auto j = nlohmann::json::parse(models::describe_model_file(file.string()));
  library::DetectedModel d;
  if (j.contains("native") && j["native"].is_object()) {
    d.architecture = j["native"].value("arch", "");
    d.scale = j["native"].value("scale", 0);
    if (j["native"].value("frames_per_call", 1) == 2) d.task = "interpolate";  // IFRNet
  }
  const bool onnx = j.value("format", "") == "onnx";
  // The cache holds the files import copies; an ONNX model's external weights are not among them.
  if (onnx && !j["external_data"].empty())
    throw Error(ErrorKind::Model, str(file.string(), ": keeps its weights in ", j["external_data"].size(),
                                      " external file(s) beside it (", j["external_data"][0].get<std::string>(),
                                      "...), which models import does not copy; run it with -m PATH from its folder"));
  if (j.contains("graph")) {
    // A graph framelift runs, not a known native net.
    if (d.architecture.empty()) d.architecture = onnx ? "onnx" : "ncnn";
    d.scale = j["graph"].value("scale", d.scale);
  }
  return d;
}

ImportedModelFile import_file(library::ModelCache& cache, const library::Catalog& catalog, const fs::path& path,
                              const std::string& name) {
  const std::string model_name = name.empty() ? library::default_model_name(path) : name;
  library::check_model_name(model_name);
  // Refused here when framelift cannot run it: an installed model must be one -m can open.
  const library::DetectedModel detected = detect(path);
  ImportedModelFile out;
  const auto m = library::import_model_file(cache, catalog, path, model_name, detected, &out.unchanged);
  out.name = m.name;
  out.architecture = m.architecture;
  out.scale = m.scale;
  out.from_catalog = m.from_catalog;
  return out;
}

// A catalog model that is not installed, described from its catalog entry.
std::string describe_catalog_model(const library::CatalogModel& m) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const auto& f : m.files) files.push_back({{"name", f.name}, {"size", f.size}, {"sha256", f.sha256}});
  nlohmann::ordered_json j = {{"model", m.name}, {"installed", false}, {"task", m.task},
                              {"architecture", m.architecture}, {"format", m.format}, {"scale", m.scale},
                              {"content", m.content}, {"license", m.license}, {"description", m.description},
                              {"files", files}, {"install", str("framelift models install ", m.name)}};
  return j.dump(2);
}

}  // namespace

std::string model_cache_dir() { return library::ModelCache::open_default().root().string(); }

std::vector<std::string> model_path_names() { return library::available_model_names(); }

ModelImportResult import_models(const std::string& path_text, const std::string& name) {
  const fs::path path(path_text);
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorKind::Input, str(path_text, ": no such file or folder"));
  library::ModelCache cache = library::ModelCache::open_default();
  const library::Catalog catalog = library::Catalog::load_default();
  ModelImportResult out;
  if (fs::is_directory(path, ec) || is_archive(path)) {
    if (!name.empty()) throw Error(ErrorKind::Usage, str("--name: only for a single model file, not ", path_text));
    out.bundle = api::install_result(fs::is_directory(path, ec) ? library::import_directory(cache, catalog, path)
                                                                : library::import_npm_tarball(cache, catalog, path));
    return out;
  }
  out.file = import_file(cache, catalog, path, name);
  return out;
}

ModelVerifyResult verify_models(const std::vector<std::string>& names) {
  const library::ModelCache cache = library::ModelCache::open_default();
  std::vector<library::InstalledModel> targets;
  std::vector<library::VerifyProblem> problems;
  if (names.empty()) {
    targets = cache.list();
    problems = cache.damaged_folders();
  }
  for (const std::string& n : names) {
    auto m = cache.find(n);
    if (!m) throw Error(ErrorKind::Model, str("model '", n, "': not installed in ", cache.root().string()));
    targets.push_back(*m);
  }
  ModelVerifyResult out;
  for (const auto& m : targets) {
    const auto found = cache.verify(m);
    if (found.empty()) out.ok.push_back(m.name);
    problems.insert(problems.end(), found.begin(), found.end());
  }
  for (const auto& p : problems) out.problems.push_back(p.message());
  return out;
}

void remove_model(const std::string& name) { library::ModelCache::open_default().remove(name); }

std::string describe_model(const std::string& target) {
  try {
    return models::describe_model_file(target, true);
  } catch (const Error&) {
    // A catalog model that is not installed is still worth describing.
    const library::Catalog catalog = library::Catalog::load_default();
    const library::CatalogModel* m = catalog.find(target);
    if (!m) throw;
    return describe_catalog_model(*m);
  }
}

std::string pick_upscale_model(const std::string& quality) {
  return library::pick_upscale_model(library::ModelCache::open_default().list(), library::parse_quality(quality));
}

}  // namespace framelift
