// --quality picks among installed models by the documented rule (library/quality.h).
#include "library/quality.h"

#include <gtest/gtest.h>

#include "library_fixtures.h"
#include "util/error.h"

using namespace framelift;

namespace {

std::vector<library::InstalledModel> installed(const std::vector<std::string>& names) {
  const library::Catalog catalog = test::real_catalog();
  std::vector<library::InstalledModel> out;
  for (const auto& n : names) out.push_back(library::manifest_for(*catalog.find(n), "test"));
  return out;
}

}  // namespace

TEST(Quality, PicksByTierThenPreference) {
  auto all = installed({"2x-AniScale", "realesrgan-x4plus-anime", "realcugan-se-2x-no-denoise", "realesr-general-x4v3",
                        "realesr-animevideov3-x2", "realesrgan-x4plus", "realcugan-se-2x-conservative", "rife-v4.6"});
  EXPECT_EQ(library::pick_upscale_model(all, library::Quality::Fast), "realesr-animevideov3-x2");
  EXPECT_EQ(library::pick_upscale_model(all, library::Quality::Balanced), "realcugan-se-2x-conservative");
  EXPECT_EQ(library::pick_upscale_model(all, library::Quality::Best), "realesrgan-x4plus");
  // Without the preferred models, any installed model of the tier's architecture.
  auto few = installed({"2x-AniScale", "4x-NMKD-YandereNeo-Superlite", "realcugan-se-3x-no-denoise"});
  EXPECT_EQ(library::pick_upscale_model(few, library::Quality::Fast), "2x-AniScale");
  EXPECT_EQ(library::pick_upscale_model(few, library::Quality::Best), "4x-NMKD-YandereNeo-Superlite");
  EXPECT_EQ(library::pick_upscale_model(few, library::Quality::Balanced), "realcugan-se-3x-no-denoise");
}

TEST(Quality, EmptyTierNamesAModelToInstall) {
  try {
    library::pick_upscale_model(installed({"realesr-animevideov3-x2", "rife-v4.6"}), library::Quality::Best);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Model);
    EXPECT_NE(std::string(e.what()).find("framelift models install realesrgan-x4plus"), std::string::npos) << e.what();
  }
  EXPECT_THROW(library::parse_quality("ultra"), Error);
  EXPECT_EQ(library::parse_quality("balanced"), library::Quality::Balanced);
}
