// `framelift models install|import|verify|remove|info`: the model library from the command line.
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "cli/models_actions.h"
#include "library/catalog.h"
#include "library/directory_import.h"
#include "library/file_import.h"
#include "library/install.h"
#include "library/model_cache.h"
#include "library/npm_import.h"
#include "models/model_files.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::cli {
namespace {

bool is_archive(const fs::path& p) {
  const std::string n = p.filename().string();
  auto ends = [&](const char* s) { return n.size() > std::strlen(s) && n.compare(n.size() - std::strlen(s), std::string::npos, s) == 0; };
  return ends(".tgz") || ends(".tar.gz") || ends(".tar") || ends(".zip");
}

// Prints what happened, one line per model; the exit code is the first problem's.
int report(const library::InstallReport& r, const std::string& what) {
  for (const auto& m : r.installed) std::printf("installed %s (%s)\n", m.name.c_str(), m.source.c_str());
  for (const auto& n : r.unchanged) std::printf("already installed: %s\n", n.c_str());
  for (const auto& n : r.notes) log::warn(n);
  for (const auto& p : r.problems) log::error(p.message);
  if (!r.problems.empty()) return exit_code(r.problems.front().kind);
  if (r.installed.empty() && r.unchanged.empty())
    throw Error(ErrorKind::Input, str(what, ": holds no model of the catalog (files are matched by SHA-256)"));
  return kExitOk;
}

// Architecture and scale of a user's file, from the same detection `models info` prints.
library::DetectedModel detect(const fs::path& file) {
  const auto j = nlohmann::json::parse(models::describe_model_file(file.string()));
  library::DetectedModel d;
  if (j.contains("native") && j["native"].is_object()) {
    d.architecture = j["native"].value("arch", "");
    d.scale = j["native"].value("scale", 0);
  }
  if (j.contains("graph")) {
    if (d.architecture.empty()) d.architecture = "ncnn";  // a graph framelift runs, not a known native net
    d.scale = j["graph"].value("scale", d.scale);
  }
  return d;
}

}  // namespace

int install_models(const std::vector<std::string>& names, const std::string& from_dir, bool download) {
  library::ModelCache cache = library::ModelCache::open_default();
  library::InstallOptions options;
  options.from_dir = from_dir;
  options.download = download;
  return report(library::install_models(cache, library::Catalog::load_default(), names, options), "install");
}

int import_models(const std::string& path_text, const std::string& name) {
  const fs::path path(path_text);
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorKind::Input, str(path_text, ": no such file or folder"));
  library::ModelCache cache = library::ModelCache::open_default();
  const library::Catalog catalog = library::Catalog::load_default();
  if (fs::is_directory(path, ec) || is_archive(path)) {
    if (!name.empty()) throw Error(ErrorKind::Usage, str("--name: only for a single model file, not ", path_text));
    return report(fs::is_directory(path, ec) ? library::import_directory(cache, catalog, path)
                                             : library::import_npm_tarball(cache, catalog, path),
                  path_text);
  }
  const std::string model_name = name.empty() ? library::default_model_name(path) : name;
  library::check_model_name(model_name);
  // Refused here when framelift cannot run it: an installed model must be one -m can open.
  const library::DetectedModel detected = detect(path);
  bool unchanged = false;
  const auto m = library::import_model_file(cache, catalog, path, model_name, detected, &unchanged);
  if (unchanged) std::printf("already installed: %s\n", m.name.c_str());
  else
    std::printf("installed %s (%s, %s%s)\n", m.name.c_str(), m.architecture.c_str(), m.scale > 0 ? str(m.scale, "x").c_str() : "",
                m.from_catalog ? ", catalog model" : "");
  return kExitOk;
}

int verify_models(const std::vector<std::string>& names) {
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
  for (const auto& m : targets) {
    auto found = cache.verify(m);
    if (found.empty()) std::printf("ok %s\n", m.name.c_str());
    problems.insert(problems.end(), found.begin(), found.end());
  }
  for (const auto& p : problems) log::error(p.message());
  if (!problems.empty()) {
    log::error(problems.size(), " problem(s) in ", cache.root().string(),
               "; reinstall with `framelift models install NAME` (or remove the model)");
    return exit_code(ErrorKind::Model);
  }
  return kExitOk;
}

int remove_models(const std::vector<std::string>& names) {
  library::ModelCache cache = library::ModelCache::open_default();
  for (const std::string& n : names) {
    cache.remove(n);
    std::printf("removed %s\n", n.c_str());
  }
  return kExitOk;
}

int print_model_info(const std::string& target) {
  try {
    std::printf("%s\n", models::describe_model_file(target).c_str());
    return kExitOk;
  } catch (const Error& e) {
    // A catalog model that is not installed is still worth describing.
    const library::Catalog catalog = library::Catalog::load_default();
    const library::CatalogModel* m = catalog.find(target);
    if (!m) throw;
    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (const auto& f : m->files) files.push_back({{"name", f.name}, {"size", f.size}, {"sha256", f.sha256}});
    nlohmann::ordered_json j = {{"model", m->name}, {"installed", false}, {"task", m->task},
                                {"architecture", m->architecture}, {"format", m->format}, {"scale", m->scale},
                                {"content", m->content}, {"license", m->license}, {"description", m->description},
                                {"files", files}, {"install", str("framelift models install ", m->name)}};
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
}

}  // namespace framelift::cli
