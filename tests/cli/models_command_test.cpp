#include <gtest/gtest.h>

#include "cli/cli_runner.h"

namespace framelift::test {
namespace {

nlohmann::json info(const std::string& model) {
  auto r = framelift("models info " + model + " 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output, nullptr, false);
}

TEST(ModelsCommand, InfoDetectsArchitectureAndScale) {
  auto models = npm_package("waifu2x") / "models";
  if (!std::filesystem::exists(models)) GTEST_SKIP() << "models not installed (scripts/setup.sh)";
  auto compact = info(shell_quote(models / "2x-AniScale.pth"));
  EXPECT_EQ(compact["native"]["arch"], "srvgg_compact");
  EXPECT_EQ(compact["native"]["scale"], 2);
  auto esrgan = info(shell_quote(models / "4x-NMKD-YandereNeo-Superlite.pth"));
  EXPECT_EQ(esrgan["native"]["arch"], "rrdbnet");
  EXPECT_EQ(esrgan["native"]["scale"], 4);
  auto ncnn = info("realesr-animevideov3-x2");
  EXPECT_EQ(ncnn["format"], "ncnn");
  EXPECT_EQ(ncnn["graph"]["scale"], 2);
  EXPECT_EQ(ncnn["native"]["arch"], "srvgg_compact");

  auto omnisr = framelift("models info " + shell_quote(models / "4x_WTP_descreenton.pth"));
  EXPECT_EQ(omnisr.exit_code, 5);
  EXPECT_NE(omnisr.output.find("4x_WTP_descreenton.pth: unsupported architecture"), std::string::npos) << omnisr.output;
}

TEST(ModelsCommand, ListShowsInstalledModels) {
  if (!std::filesystem::exists(npm_package("waifu2x"))) GTEST_SKIP() << "models not installed (scripts/setup.sh)";
  auto r = framelift("models list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"realesr-animevideov3-x2", "realesrgan-x4plus", "realesr-general-x4v3", "up2x-no-denoise"})
    EXPECT_NE(r.output.find(name), std::string::npos) << name << "\n" << r.output;
}

}  // namespace
}  // namespace framelift::test
