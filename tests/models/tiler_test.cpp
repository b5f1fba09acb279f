// Tiled inference equals untiled inference on real footage with a real model (seams invisible).
#include <gtest/gtest.h>

#include <ATen/ATen.h>


#include "library/model_locator.h"
#include "infer/tiler.h"
#include "models/model_files.h"
#include "models/arch_support.h"
#include "support/test_paths.h"
#include "util/profiler.h"

namespace framelift::infer {
namespace {

at::Tensor real_frame(int w, int h) { return test::real_frame(w, h)[0]; }
using test::psnr;

TEST(Tiler, TiledEqualsUntiledOnRealFootage) {
  if (library::available_model_names().empty()) GTEST_SKIP() << "no models: run scripts/setup.sh";
  auto model = models::open_model("realesr-animevideov3-x2");
  at::InferenceMode guard;
  at::Tensor frame = real_frame(150, 110);
  at::Tensor whole = upscale_tiled(*model, frame, {.tile = 1024, .overlap = 0});
  ASSERT_EQ(whole.sizes(), (at::IntArrayRef{3, 220, 300}));
  // 64 px tiles do not divide 150x110: edge tiles are partial.
  at::Tensor tiled = upscale_tiled(*model, frame, {.tile = 64, .overlap = 16});
  ASSERT_EQ(tiled.sizes(), whole.sizes());
  double p = psnr(tiled, whole);
  std::printf("tiled (64 px, overlap 16) vs untiled: PSNR %.2f dB\n", p);
  EXPECT_GE(p, 50.0);
  // Without context the seams show: the check above can fail.
  double no_context = psnr(upscale_tiled(*model, frame, {.tile = 64, .overlap = 0}), whole);
  std::printf("tiled without overlap: PSNR %.2f dB\n", no_context);
  EXPECT_LT(no_context, p);
}

// The waifu2x networks that run natively in place of their ncnn graphs: UpConv7 sees 7 px around
// each pixel, well inside the 16 px of context; the CUNet's squeeze-excitation means see the whole
// window, so its tiles come close to the whole frame without being exact (48 dB measured, as the
// graph interpreter's would: the means are part of the network), and context does not bring it
// closer (the means of a wider window are no nearer the frame's): 46.5 dB with 16 px, 47.8 without.
// The CUNet reflects 28 px inside each window; the tiler's equal spans (util/tile_spans.h) leave
// no window under half a tile plus its context, and 140x72 in 64 px tiles once left one of 28x24.
TEST(Tiler, Waifu2xNativeTiledEqualsUntiled) {
  struct Named {
    const char* name;
    int w, h;
    double min_db;
    bool context_helps;
  };
  for (auto [name, w, h, min_db, context_helps] :
       {Named{"waifu2x-upconv7-anime-2x-noise1", 150, 110, 50.0, true}, Named{"waifu2x-cunet-noise2", 160, 120, 45.0, false},
        Named{"waifu2x-cunet-noise1", 140, 72, 45.0, false}}) {
    std::unique_ptr<models::ImageModel> model;
    try {
      model = models::open_model(name);
    } catch (const std::exception& e) {
      GTEST_SKIP() << name << ": " << e.what();
    }
    ASSERT_NE(model->info().arch, "ncnn_graph") << name;
    at::InferenceMode guard;
    at::Tensor frame = real_frame(w, h);
    at::Tensor whole = upscale_tiled(*model, frame, {.tile = 1024, .overlap = 0});
    at::Tensor tiled = upscale_tiled(*model, frame, {.tile = 64, .overlap = 16});
    ASSERT_EQ(tiled.sizes(), whole.sizes()) << name;
    const double p = psnr(tiled, whole);
    const double no_context = psnr(upscale_tiled(*model, frame, {.tile = 64, .overlap = 0}), whole);
    std::printf("%s: tiled (64 px, overlap 16) vs untiled %.2f dB, without overlap %.2f dB\n", name, p, no_context);
    EXPECT_GE(p, min_db) << name;
    if (context_helps) {
      EXPECT_LT(no_context, p) << name;
    }
  }
}

// Network calls of one upscale_tiled, counted by the profiler.
int64_t calls_of(models::ImageModel& model, const at::Tensor& frame, TileOptions options, at::Tensor* out) {
  Profiler profiler;
  {
    ProfileScope scope(&profiler);
    *out = upscale_tiled(model, frame, options);
  }
  auto sections = profiler.sections();
  return sections.count("inference") ? sections.at("inference").calls : 0;
}

TEST(Tiler, BatchedTilesGiveTheSameFrameInFewerCalls) {
  if (library::available_model_names().empty()) GTEST_SKIP() << "no models: run scripts/setup.sh";
  auto model = models::open_model("realesr-animevideov3-x2");
  at::InferenceMode guard;
  // Two frames (a frame batch) of 200x150 in 32 px tiles with 8 px of context: 7 x 5 = 35 tiles
  // (util/tile_spans.h: columns of 29, 29, 29, 29, 28, 28, 28 px, rows of 30). Window widths by
  // column: 37, 45 (three times), 44 (twice), 36; heights by row: 38, 46 (three times), 38.
  // Same-size groups (h x w): 9 of 46x45, 6 each of 46x44 / 38x45, 4 of 38x44, 3 each of 46x37 /
  // 46x36, 2 each of 38x37 / 38x36: at 4 per call 3 + 2 + 2 + 1 + 1 + 1 + 1 + 1 = 12 calls.
  at::Tensor frames = at::stack({real_frame(200, 150), real_frame(200, 150).flip(2)});
  at::Tensor one_by_one, batched;
  const int64_t single = calls_of(*model, frames, {.tile = 32, .overlap = 8}, &one_by_one);
  const int64_t fewer = calls_of(*model, frames, {.tile = 32, .overlap = 8, .batch = 4}, &batched);
  EXPECT_EQ(single, 35);
  EXPECT_EQ(fewer, 12);
  ASSERT_EQ(batched.sizes(), one_by_one.sizes());
  // The same network on the same windows: equal up to float summation order.
  EXPECT_LT((batched - one_by_one).abs().max().item<double>(), 1e-4);
  EXPECT_GE(psnr(batched[1], one_by_one[1]), 80.0);
}

TEST(Tiler, PadsToTheModelMultipleAndCropsBack) {
  at::Tensor x = at::arange(2 * 5 * 7, at::kFloat).reshape({1, 2, 5, 7});
  at::Tensor p = pad_to_multiple(x, 4);
  ASSERT_EQ(p.sizes(), (at::IntArrayRef{1, 2, 8, 8}));
  EXPECT_TRUE(p.narrow(2, 0, 5).narrow(3, 0, 7).equal(x));
  // Reflection: the first padded column mirrors the one before the edge.
  EXPECT_TRUE(p.select(3, 7).narrow(2, 0, 5).equal(x.select(3, 5)));
  at::Tensor tiny = at::ones({1, 1, 1, 1});
  EXPECT_EQ(pad_to_multiple(tiny, 8).sizes(), (at::IntArrayRef{1, 1, 8, 8}));  // replicate fallback
}


// The same network with another tile grid: the unaligned reference for the test below.
struct GridOverride : models::ImageModel {
  GridOverride(models::ImageModel& m, int grid) : inner(m), i(m.info()) { i.tile_grid = grid; }
  const models::ModelInfo& info() const override { return i; }
  at::Tensor forward(const at::Tensor& x) override { return inner.forward(x); }
  void to(c10::Device d, c10::ScalarType t) override { inner.to(d, t); }
  models::ImageModel& inner;
  models::ModelInfo i;
};

// Real-CUGAN's stride-2 layers put its tiles on a grid of 2 input px (4 for 3x, whose UNet2 runs
// at the output size); tiles that start off it are further from the whole frame. Neither is exact:
// the squeeze-excitation means see the window (44.6-47.4 dB measured with the grid).
TEST(Tiler, RealCuganTilesOnItsDownsamplingGrid) {
  struct Case {
    const char* name;
    int grid;
  };
  for (auto [name, grid] : {Case{"realcugan-se-2x-conservative", 2}, Case{"realcugan-se-3x-conservative", 4},
                            Case{"realcugan-se-4x-conservative", 2}}) {
    std::unique_ptr<models::ImageModel> model;
    try {
      model = models::open_model(name);
    } catch (const std::exception& e) {
      GTEST_SKIP() << name << ": " << e.what();
    }
    EXPECT_EQ(model->info().tile_grid, grid) << name;
    at::InferenceMode guard;
    at::Tensor frame = real_frame(150, 110);
    at::Tensor whole = upscale_tiled(*model, frame, {.tile = 1024, .overlap = 0});
    GridOverride unaligned(*model, 1);
    const double aligned_db = psnr(upscale_tiled(*model, frame, {.tile = 64, .overlap = 16}), whole);
    const double unaligned_db = psnr(upscale_tiled(unaligned, frame, {.tile = 64, .overlap = 16}), whole);
    std::printf("%s: tiles on the grid of %d %.2f dB, off it %.2f dB\n", name, grid, aligned_db, unaligned_db);
    EXPECT_GE(aligned_db, 44.0) << name;
    EXPECT_GT(aligned_db, unaligned_db + 0.25) << name;
  }
}

}  // namespace
}  // namespace framelift::infer
