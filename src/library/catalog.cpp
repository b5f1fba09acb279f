#include "library/catalog.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "library/locations.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace framelift::library {
namespace {

bool is_sha256(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// A file name that stays inside the model's folder.
bool is_plain_file_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos && s.front() != '.';
}

CatalogModel parse_model(const json& m) {
  CatalogModel model;
  model.name = m.at("name").get<std::string>();
  model.task = m.at("task").get<std::string>();
  model.architecture = m.at("architecture").get<std::string>();
  model.format = m.value("format", "");
  model.content = m.value("content", "");
  model.license = m.value("license", "");
  model.description = m.value("description", "");
  model.variant = m.value("variant", "");
  if (m.contains("scale") && !m.at("scale").is_null()) model.scale = m.at("scale").get<int>();
  if (m.contains("noise")) model.noise = m.at("noise").get<int>();
  if (m.contains("hyperparameters"))
    for (auto& [key, value] : m.at("hyperparameters").items()) {
      if (!value.is_number()) throw std::runtime_error(str("model ", model.name, ": hyperparameter ", key, " is not a number"));
      model.hyperparameters.emplace_back(key, value.get<double>());
    }
  for (const json& f : m.at("files")) {
    ModelFile file{f.at("name").get<std::string>(), f.at("size").get<std::uint64_t>(), f.at("sha256").get<std::string>()};
    if (!is_plain_file_name(file.name)) throw std::runtime_error(str("model ", model.name, ": bad file name '", file.name, "'"));
    if (!is_sha256(file.sha256)) throw std::runtime_error(str("model ", model.name, ": file ", file.name, ": bad sha256"));
    model.files.push_back(std::move(file));
  }
  if (model.files.empty()) throw std::runtime_error(str("model ", model.name, ": no files"));
  for (const json& s : m.at("sources")) {
    const std::string type = s.at("type").get<std::string>();
    if (type == "npm") {
      NpmSource npm{s.at("package").get<std::string>(), {}};
      for (auto& [file, path] : s.at("paths").items()) npm.paths[file] = path.get<std::string>();
      for (const ModelFile& f : model.files)
        if (!npm.paths.count(f.name))
          throw std::runtime_error(str("model ", model.name, ": npm source has no path for ", f.name));
      model.npm = std::move(npm);
    } else if (type == "upstream") {
      UpstreamSource up;
      up.url = s.value("url", "");
      if (s.contains("urls"))
        for (auto& [file, url] : s.at("urls").items()) up.urls[file] = url.get<std::string>();
      up.format = s.value("format", model.format);
      up.verified = s.value("verified", false);
      up.page = s.value("page", false);
      if (up.url.empty() && up.urls.empty()) throw std::runtime_error(str("model ", model.name, ": upstream source without url"));
      model.upstream.push_back(std::move(up));
    } else {
      throw std::runtime_error(str("model ", model.name, ": unknown source type '", type, "'"));
    }
  }
  return model;
}

}  // namespace

std::string NpmPackage::name() const { return spec.substr(0, spec.rfind('@')); }
std::string NpmPackage::version() const { return spec.substr(spec.rfind('@') + 1); }

std::string NpmPackage::tarball_name() const {
  std::string n = name();
  if (!n.empty() && n.front() == '@') n = n.substr(1);
  std::replace(n.begin(), n.end(), '/', '-');
  return str(n, "-", version(), ".tgz");
}

const ModelFile* CatalogModel::file(std::string_view file_name) const {
  for (const ModelFile& f : files)
    if (f.name == file_name) return &f;
  return nullptr;
}

Catalog Catalog::load(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(ErrorKind::Input, str(file.string(), ": cannot read the model catalog"));
  Catalog catalog;
  catalog.file_ = file;
  try {
    const json j = json::parse(in);
    if (j.at("schema").get<int>() != 1) throw std::runtime_error(str("unsupported schema ", j.at("schema").dump()));
    for (auto& [spec, info] : j.at("npm_packages").items()) {
      if (spec.rfind('@') == 0 || spec.rfind('@') == std::string::npos)
        throw std::runtime_error(str("npm package '", spec, "' is not name@version"));
      catalog.packages_[spec] = NpmPackage{spec, info.value("size", std::uint64_t(0)), info.value("sha256", "")};
    }
    std::set<std::string> names;
    for (const json& m : j.at("models")) {
      CatalogModel model = parse_model(m);
      if (!names.insert(model.name).second) throw std::runtime_error(str("model ", model.name, " is listed twice"));
      if (model.npm && !catalog.packages_.count(model.npm->package))
        throw std::runtime_error(str("model ", model.name, ": npm package ", model.npm->package, " is not in npm_packages"));
      catalog.models_.push_back(std::move(model));
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Input, str(file.string(), ": malformed model catalog (", e.what(), ")"));
  }
  return catalog;
}

Catalog Catalog::load_default() { return load(default_catalog_path()); }

const CatalogModel* Catalog::find(std::string_view name) const {
  for (const CatalogModel& m : models_)
    if (m.name == name) return &m;
  return nullptr;
}

const NpmPackage* Catalog::package(std::string_view spec) const {
  auto it = packages_.find(spec);
  return it == packages_.end() ? nullptr : &it->second;
}

std::vector<std::string> Catalog::closest(std::string_view name, size_t count) const {
  std::vector<std::string> names;
  for (const CatalogModel& m : models_) names.push_back(m.name);
  return closest_names(name, std::move(names), count);
}

size_t name_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view name, std::vector<std::string> names, size_t count) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return name_distance(a, name) < name_distance(b, name);
  });
  if (names.size() > count) names.resize(count);
  return names;
}

}  // namespace framelift::library
