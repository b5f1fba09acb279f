#pragma once
// The model catalog (data/models.json, a data file): every model framelift knows by name, its
// files with size and SHA-256, and where those files can be had (an npm package, upstream
// downloads). Installers trust a file only when its bytes hash to the catalog's SHA-256.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace framelift::library {

struct ModelFile {
  std::string name;  // file name inside the model's folder
  std::uint64_t size = 0;
  std::string sha256;  // 64 lowercase hex digits
};

struct NpmSource {
  std::string package;                       // "waifu2x@1.6.5"
  std::map<std::string, std::string> paths;  // file name -> path inside the tarball
};

struct UpstreamSource {
  std::string url;                          // a .zip holding the files, or the model's one file
  std::map<std::string, std::string> urls;  // or one download per file name
  std::string format;                       // format of what the URL gives (ncnn, pth, ...)
  bool verified = false;                    // its bytes were checked against the catalog hashes
  bool page = false;                        // a web page to read, not a download
};

struct NpmPackage {
  std::string spec;  // name@version
  std::uint64_t size = 0;
  std::string sha256;

  std::string name() const;
  std::string version() const;
  // The file `npm pack` writes: NAME-VERSION.tgz ("@scope/x" becomes "scope-x").
  std::string tarball_name() const;
};

struct CatalogModel {
  std::string name, task, architecture, format, content, license, description, variant;
  int scale = 0;   // output/input size; 0 for models that do not upscale (interpolation)
  int noise = -1;  // denoise level 0-3; -1 when the model does not denoise
  std::vector<ModelFile> files;
  std::optional<NpmSource> npm;
  std::vector<UpstreamSource> upstream;
  // The network's hyper-parameters ("embed_dim" 180, ...), as detection would read them off the
  // file: what the planner prices a model by before it is installed. Empty: the architecture's
  // common values.
  std::vector<std::pair<std::string, double>> hyperparameters;

  const ModelFile* file(std::string_view name) const;
};

class Catalog {
 public:
  // Throws Error(Input, "<file>: <problem>") for a missing or malformed catalog.
  static Catalog load(const std::filesystem::path& file);
  static Catalog load_default();  // locations.h: default_catalog_path()

  const std::filesystem::path& file() const { return file_; }
  const std::vector<CatalogModel>& models() const { return models_; }
  const CatalogModel* find(std::string_view name) const;
  const NpmPackage* package(std::string_view spec) const;
  const std::map<std::string, NpmPackage, std::less<>>& packages() const { return packages_; }

  // Up to `count` catalog names closest to `name` (edit distance), for "did you mean" messages.
  std::vector<std::string> closest(std::string_view name, size_t count = 3) const;

 private:
  std::filesystem::path file_;
  std::vector<CatalogModel> models_;
  std::map<std::string, NpmPackage, std::less<>> packages_;
};

// Edit distance between two names (closest-name suggestions).
size_t name_distance(std::string_view a, std::string_view b);

// The `count` names of `names` closest to `name`, closest first.
std::vector<std::string> closest_names(std::string_view name, std::vector<std::string> names, size_t count = 3);

}  // namespace framelift::library
