// The cache folder: atomic installs (nothing half-written is ever a model), leftovers of crashed
// installs, verify, remove.
#include "library/model_cache.h"

#include <gtest/gtest.h>

#include "library/installed_model.h"
#include "library/staged_install.h"
#include "library_fixtures.h"
#include "net/sha256.h"
#include "util/error.h"

namespace fs = std::filesystem;
using namespace framelift;
using library::ModelCache;
using library::StagedInstall;

namespace {

// Installs realesr-animevideov3-x2 from the real files, the way every installer does.
library::InstalledModel install_real_x2(ModelCache& cache) {
  const library::Catalog catalog = test::real_catalog();
  const library::CatalogModel& model = *catalog.find("realesr-animevideov3-x2");
  StagedInstall staging(cache, model.name, model.files);
  for (const auto& f : model.files) library::copy_and_hash(test::real_esrgan_models() / f.name, staging.file(f.name));
  return staging.commit(library::manifest_for(model, "test"));
}

}  // namespace

TEST(ModelCache, CommitInstallsVerifiedFilesUnderTheName) {
  FL_REQUIRE_DEPS(test::real_esrgan_models());
  ModelCache cache(test::temp_dir("cache") / "models");
  EXPECT_TRUE(cache.list().empty());  // a missing root is an empty cache
  const auto installed = install_real_x2(cache);
  EXPECT_EQ(installed.dir, cache.root() / "realesr-animevideov3-x2");
  EXPECT_EQ(test::installed_names(cache), std::vector<std::string>{"realesr-animevideov3-x2"});
  const auto found = cache.find("realesr-animevideov3-x2");
  ASSERT_TRUE(found);
  EXPECT_EQ(cache.checked_main_file(*found), installed.dir / "realesr-animevideov3-x2.param");
  // The installed bytes are the real files' bytes.
  EXPECT_EQ(net::sha256_file(installed.dir / "realesr-animevideov3-x2.bin"),
            net::sha256_file(test::real_esrgan_models() / "realesr-animevideov3-x2.bin"));
  EXPECT_TRUE(cache.verify(*found).empty());
  // Only the model folder and the lock remain: no staging folder.
  EXPECT_EQ(test::cache_entries(cache), (std::vector<std::string>{".lock", "realesr-animevideov3-x2"}));
}

TEST(ModelCache, WrongHashIsNeverInstalled) {
  FL_REQUIRE_DEPS(test::real_esrgan_models());
  ModelCache cache(test::temp_dir("cache") / "models");
  const library::Catalog catalog = test::real_catalog();
  const library::CatalogModel& model = *catalog.find("realesr-animevideov3-x2");
  {
    StagedInstall staging(cache, model.name, model.files);
    for (const auto& f : model.files) library::copy_and_hash(test::real_esrgan_models() / f.name, staging.file(f.name));
    test::flip_byte(staging.file("realesr-animevideov3-x2.bin"), 4096);
    try {
      staging.commit(library::manifest_for(model, "test"));
      FAIL() << "a corrupted file was committed";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Model);
      EXPECT_NE(std::string(e.what()).find("realesr-animevideov3-x2.bin: SHA-256 mismatch"), std::string::npos) << e.what();
    }
    // While the failed staging object lives, its folder is still hidden from readers.
    EXPECT_TRUE(cache.list().empty());
    EXPECT_FALSE(cache.find(model.name));
  }
  // A missing file fails the same way.
  {
    StagedInstall staging(cache, model.name, model.files);
    library::copy_and_hash(test::real_esrgan_models() / "realesr-animevideov3-x2.param", staging.file("realesr-animevideov3-x2.param"));
    EXPECT_THROW(staging.commit(library::manifest_for(model, "test")), Error);
  }
  EXPECT_TRUE(cache.list().empty());
  EXPECT_EQ(test::cache_entries(cache), std::vector<std::string>{".lock"});
}

TEST(ModelCache, LeftoversOfACrashedInstallAreIgnoredThenCleared) {
  FL_REQUIRE_DEPS(test::real_esrgan_models());
  ModelCache cache(test::temp_dir("cache") / "models");
  install_real_x2(cache);
  // A crash after all files and even the manifest were staged, before the rename.
  const fs::path leftover = cache.root() / ".staging-realesr-animevideov3-x3-Ab12Cd";
  fs::copy(cache.root() / "realesr-animevideov3-x2", leftover);
  // A folder someone copied in by hand, without a manifest.
  fs::create_directories(cache.root() / "half-copied");
  fs::copy_file(test::real_esrgan_models() / "realesr-animevideov3-x3.param", cache.root() / "half-copied" / "x.param");

  EXPECT_EQ(test::installed_names(cache), std::vector<std::string>{"realesr-animevideov3-x2"});
  EXPECT_FALSE(cache.find(".staging-realesr-animevideov3-x3-Ab12Cd"));
  EXPECT_FALSE(cache.find("half-copied"));
  const auto damaged = cache.damaged_folders();
  ASSERT_EQ(damaged.size(), 1u);
  EXPECT_EQ(damaged[0].model, "half-copied");

  // The next writer clears the staging leftover (no other writer can hold the lock).
  { auto lock = cache.lock(); }
  EXPECT_FALSE(fs::exists(leftover));
  EXPECT_TRUE(fs::exists(cache.root() / "half-copied"));  // not ours to delete
}

TEST(ModelCache, VerifyFindsAFlippedByteAndAMissingFile) {
  FL_REQUIRE_DEPS(test::real_esrgan_models());
  ModelCache cache(test::temp_dir("cache") / "models");
  const auto installed = install_real_x2(cache);
  const fs::path bin = installed.dir / "realesr-animevideov3-x2.bin";
  test::flip_byte(bin, 1000);
  auto problems = cache.verify(*cache.find("realesr-animevideov3-x2"));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].file, "realesr-animevideov3-x2.bin");
  EXPECT_NE(problems[0].message().find(bin.string() + ": model realesr-animevideov3-x2: SHA-256 mismatch"), std::string::npos)
      << problems[0].message();
  // Same size: loading checks the SHA-256 too (the README's promise).
  try {
    cache.checked_main_file(*cache.find("realesr-animevideov3-x2"));
    ADD_FAILURE() << "a same-size tampered file was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Model);
    EXPECT_NE(std::string(e.what()).find(bin.string() + ": file of installed model realesr-animevideov3-x2 does not match its SHA-256"),
              std::string::npos) << e.what();
  }

  fs::remove(installed.dir / "realesr-animevideov3-x2.param");
  problems = cache.verify(*cache.find("realesr-animevideov3-x2"));
  EXPECT_EQ(problems.size(), 2u);
  try {
    cache.checked_main_file(*cache.find("realesr-animevideov3-x2"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("realesr-animevideov3-x2.param: file of installed model"), std::string::npos) << e.what();
  }
}

TEST(ModelCache, LoadRehashesAFileThatChangedSinceItWasVerified) {
  FL_REQUIRE_DEPS(test::real_esrgan_models());
  ModelCache cache(test::temp_dir("cache") / "models");
  const auto installed = install_real_x2(cache);
  const fs::path bin = installed.dir / "realesr-animevideov3-x2.bin";
  EXPECT_NO_THROW(cache.checked_main_file(*cache.find("realesr-animevideov3-x2")));
  EXPECT_TRUE(fs::exists(installed.dir / ".verified.json"));  // the next load skips the hash
  EXPECT_NO_THROW(cache.checked_main_file(*cache.find("realesr-animevideov3-x2")));
  // A same-size edit with the modification time put back: the change time still differs.
  const auto mtime = fs::last_write_time(bin);
  test::flip_byte(bin, 4321);
  fs::last_write_time(bin, mtime);
  EXPECT_THROW(cache.checked_main_file(*cache.find("realesr-animevideov3-x2")), Error);
  // Put right again: accepted (rehashed, not remembered as bad).
  test::flip_byte(bin, 4321);
  EXPECT_NO_THROW(cache.checked_main_file(*cache.find("realesr-animevideov3-x2")));
}

TEST(ModelCache, ReinstallSwapsAndRemoveDeletes) {
  FL_REQUIRE_DEPS(test::real_esrgan_models());
  ModelCache cache(test::temp_dir("cache") / "models");
  install_real_x2(cache);
  test::flip_byte(cache.root() / "realesr-animevideov3-x2" / "realesr-animevideov3-x2.bin", 10);
  install_real_x2(cache);  // replaces the damaged install in one rename
  EXPECT_TRUE(cache.verify(*cache.find("realesr-animevideov3-x2")).empty());
  EXPECT_EQ(test::cache_entries(cache), (std::vector<std::string>{".lock", "realesr-animevideov3-x2"}));

  cache.remove("realesr-animevideov3-x2");
  EXPECT_TRUE(cache.list().empty());
  EXPECT_EQ(test::cache_entries(cache), std::vector<std::string>{".lock"});
  try {
    cache.remove("realesr-animevideov3-x2");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Model);
    EXPECT_NE(std::string(e.what()).find("not installed"), std::string::npos);
  }
}

TEST(ModelCache, BadNamesAndASecondWriterAreRefused) {
  ModelCache cache(test::temp_dir("cache") / "models");
  for (const char* bad : {"", ".hidden", "a/b", "with space", ".."}) EXPECT_THROW(StagedInstall(cache, bad, {}), Error) << bad;
  auto held = cache.lock();
  ModelCache other(cache.root());  // another process, as far as flock is concerned
  try {
    other.lock();
    FAIL() << "two writers held the cache lock";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Resource);
  }
  EXPECT_EQ(cache.lock(), held);  // re-entrant for the holder
}
