#pragma once
// Registers a model file the user owns (a community .pth/.safetensors checkpoint, or an ncnn
// .param with its .bin) in the cache under a name, so `-m NAME` finds it from anywhere. Telling
// what architecture a file holds needs libtorch, so the caller detects it and passes it in.
#include <filesystem>
#include <string>
#include <vector>

#include "library/catalog.h"
#include "library/installed_model.h"
#include "library/model_cache.h"

namespace framelift::library {

struct DetectedModel {
  std::string architecture;  // framelift's architecture name (src/models)
  int scale = 0;             // output/input size; 1 for restoration models
  std::string task;          // "interpolate" for interpolators; "" leaves it to the scale
};

// The files that make up the model `file` names: itself, plus the .bin next to a .param (or the
// .param next to a .bin). Throws Error(Model, "<file>: ...") for a missing partner or an
// unsupported file type.
std::vector<std::filesystem::path> model_file_set(const std::filesystem::path& file);

// Whether `path` looks like one model file by its extension (.pth .pt .ckpt .safetensors .param .bin).
bool is_model_file(const std::filesystem::path& path);

// The name a file is registered under without --name: its stem ("2x-AniScale.pth" -> "2x-AniScale").
std::string default_model_name(const std::filesystem::path& file);

// Copies the files into the cache as model `name`. When `name` is a catalog name the files must
// be that catalog model's (it is then installed as such); otherwise the model is the user's own,
// with the detected architecture and scale. Throws Error(Model) when `name` is installed with
// other files. *unchanged is set when the same files were installed already.
InstalledModel import_model_file(ModelCache& cache, const Catalog& catalog, const std::filesystem::path& file,
                                 const std::string& name, const DetectedModel& detected, bool* unchanged = nullptr);

}  // namespace framelift::library
