#pragma once
// Where the model library lives on disk. Each place can be moved with an environment variable so
// that tests, containers and shared machines can point framelift elsewhere.
#include <filesystem>

namespace framelift::library {

// $FRAMELIFT_CATALOG, else models.json in data_dir() (data_dir.h: installed, else the source tree).
std::filesystem::path default_catalog_path();

// $FRAMELIFT_MODELS, else $XDG_DATA_HOME/framelift/models, else ~/.local/share/framelift/models.
std::filesystem::path default_cache_root();

// Where `npm pack` left the packages' tarballs: $FRAMELIFT_NPM_TARBALLS, else .deps/tarballs of
// the source tree (scripts/setup.sh).
std::filesystem::path npm_tarball_dir();

// Where scripts/setup.sh unpacked the npm packages (.deps/npm/NAME/package/...): a read-only
// fallback for catalog names that were never installed. Empty when not built from a checkout.
std::filesystem::path unpacked_npm_dir();

}  // namespace framelift::library
