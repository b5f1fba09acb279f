#include "library/file_import.h"

#include <algorithm>
#include <cctype>

#include "library/staged_install.h"
#include "net/sha256.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::library {
namespace {

std::string lower_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

}  // namespace

bool is_model_file(const fs::path& path) {
  const std::string ext = lower_extension(path);
  return ext == ".pth" || ext == ".pt" || ext == ".ckpt" || ext == ".safetensors" || ext == ".param" || ext == ".bin" ||
         ext == ".onnx";
}

std::vector<fs::path> model_file_set(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw Error(ErrorKind::Model, str(file.string(), ": no such model file"));
  const std::string ext = lower_extension(file);
  if (ext == ".param" || ext == ".bin") {
    fs::path param = fs::path(file).replace_extension(".param"), bin = fs::path(file).replace_extension(".bin");
    if (!fs::is_regular_file(param, ec) || !fs::is_regular_file(bin, ec))
      throw Error(ErrorKind::Model, str(file.string(), ": an ncnn model needs both ", param.filename().string(), " and ",
                                        bin.filename().string(), " side by side"));
    return {param, bin};
  }
  if (!is_model_file(file))
    throw Error(ErrorKind::Model, str(file.string(), ": unsupported model file type '", file.extension().string(),
                                      "' (ncnn .param/.bin, PyTorch .pth/.pt/.ckpt, .safetensors, ONNX .onnx)"));
  return {file};
}

std::string default_model_name(const fs::path& file) { return file.stem().string(); }

InstalledModel import_model_file(ModelCache& cache, const Catalog& catalog, const fs::path& file, const std::string& name,
                                 const DetectedModel& detected, bool* unchanged) {
  check_model_name(name);
  const std::vector<fs::path> paths = model_file_set(file);
  auto lock = cache.lock();

  InstalledModel manifest;
  std::vector<std::pair<fs::path, std::string>> copies;  // source file -> its name in the cache
  for (const fs::path& p : paths) {
    manifest.files.push_back({p.filename().string(), fs::file_size(p), net::sha256_file(p)});
    copies.emplace_back(p, p.filename().string());
  }
  if (const CatalogModel* known = catalog.find(name)) {
    // A catalog name always means the catalog's files (under the catalog's file names, whatever
    // the user's copies are called): `-m NAME` must not change meaning from machine to machine.
    std::vector<std::pair<fs::path, std::string>> catalog_copies;
    for (const ModelFile& f : known->files) {
      auto hit = std::find_if(manifest.files.begin(), manifest.files.end(), [&](auto& m) { return m.sha256 == f.sha256; });
      if (hit == manifest.files.end() || known->files.size() != manifest.files.size())
        throw Error(ErrorKind::Model, str(file.string(), ": '", name,
                                          "' is a catalog model with other files; import it under another name (--name)"));
      catalog_copies.emplace_back(copies[size_t(hit - manifest.files.begin())].first, f.name);
    }
    copies = std::move(catalog_copies);
    manifest = manifest_for(*known, "");
  } else {
    manifest.name = name;
    manifest.architecture = detected.architecture;
    manifest.scale = detected.scale;
    manifest.task = !detected.task.empty() ? detected.task : detected.scale > 1 ? "upscale" : "restore";
    const std::string ext = lower_extension(paths.front());
    manifest.format = ext == ".param" ? "ncnn" : ext.substr(1);
  }
  manifest.source = str("file ", fs::absolute(file).lexically_normal().string());

  if (auto installed = cache.find(name)) {
    if (installed->same_files(manifest.files)) {
      if (unchanged) *unchanged = true;
      return *installed;
    }
    throw Error(ErrorKind::Model, str("model '", name, "': already installed with other files (from ", installed->source,
                                      "); remove it first (framelift models remove ", name, ") or choose another --name"));
  }
  if (unchanged) *unchanged = false;
  StagedInstall staging(cache, name, manifest.files);
  for (auto& [from, to] : copies) copy_and_hash(from, staging.file(to));
  return staging.commit(std::move(manifest));
}

}  // namespace framelift::library
