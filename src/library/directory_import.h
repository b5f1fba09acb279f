#pragma once
// Installs catalog models from any folder holding their files (an unpacked npm package, an
// unpacked upstream release, a user's download folder): files are recognised by size and
// SHA-256, whatever their names and sub-folders.
#include <filesystem>
#include <set>
#include <string>

#include "library/catalog.h"
#include "library/install_report.h"
#include "library/model_cache.h"

namespace framelift::library {

// Every catalog model whose files are all under `dir`, or only those named in `only` (then a
// named model not found is a problem). Throws Error(Input) when `dir` is not a readable folder.
InstallReport import_directory(ModelCache& cache, const Catalog& catalog, const std::filesystem::path& dir,
                               const std::set<std::string>& only = {});

}  // namespace framelift::library
