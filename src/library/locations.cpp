#include "library/locations.h"

#include <cstdlib>

#include "library/data_dir.h"

namespace fs = std::filesystem;

namespace framelift::library {
namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

}  // namespace

fs::path default_catalog_path() {
  if (const char* file = env("FRAMELIFT_CATALOG")) return file;
  return data_dir() / "models.json";
}

fs::path default_cache_root() {
  if (const char* dir = env("FRAMELIFT_MODELS")) return dir;
  // XDG: a relative XDG_DATA_HOME is invalid and must be ignored.
  if (const char* xdg = env("XDG_DATA_HOME"); xdg && fs::path(xdg).is_absolute())
    return fs::path(xdg) / "framelift" / "models";
  if (const char* home = env("HOME")) return fs::path(home) / ".local" / "share" / "framelift" / "models";
  return fs::current_path() / ".framelift-models";
}

fs::path npm_tarball_dir() {
  if (const char* dir = env("FRAMELIFT_NPM_TARBALLS")) return dir;
  return fs::path(FRAMELIFT_DEPS_DIR) / "tarballs";
}

fs::path unpacked_npm_dir() { return fs::path(FRAMELIFT_DEPS_DIR) / "npm"; }

}  // namespace framelift::library
