// The catalog reader against the shipped data/models.json and against broken catalogs.
#include "library/catalog.h"

#include <gtest/gtest.h>

#include <fstream>

#include "library_fixtures.h"
#include "util/error.h"

namespace fs = std::filesystem;
using namespace framelift;

TEST(Catalog, LoadsTheShippedCatalog) {
  const library::Catalog catalog = test::real_catalog();
  const library::CatalogModel* m = catalog.find("realesr-animevideov3-x2");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->task, "upscale");
  EXPECT_EQ(m->scale, 2);
  ASSERT_TRUE(m->npm);
  EXPECT_EQ(m->npm->package, "waifu2x@1.6.5");
  ASSERT_EQ(m->files.size(), 2u);
  EXPECT_EQ(catalog.package("waifu2x@1.6.5")->tarball_name(), "waifu2x-1.6.5.tgz");
  EXPECT_EQ(catalog.find("no-such-model"), nullptr);
  // RIFE does not upscale: no scale.
  EXPECT_EQ(catalog.find("rife-v4.6")->scale, 0);
  // The closest names to a typo start with the intended one.
  EXPECT_EQ(catalog.closest("realesr-animevideov3x2").front(), "realesr-animevideov3-x2");
}

TEST(Catalog, NoRegistryHostsInTheCatalog) {
  std::ifstream in(test::source_dir() / "data" / "models.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("registry."), std::string::npos);
  EXPECT_EQ(text.find("npmjs"), std::string::npos);
}

TEST(Catalog, MalformedCatalogNamesTheFile) {
  const fs::path dir = test::temp_dir("catalog");
  const fs::path bad = dir / "models.json";
  std::ofstream(bad) << R"({"schema": 1, "npm_packages": {}, "models": [{"name": "x", "task": "upscale"}]})";
  try {
    library::Catalog::load(bad);
    FAIL() << "a catalog without files loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find(bad.string() + ": malformed model catalog"), std::string::npos) << e.what();
  }
  try {
    library::Catalog::load(dir / "missing.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json: cannot read"), std::string::npos) << e.what();
  }
}
