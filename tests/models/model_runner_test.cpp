// Memory budget, tile planning, OOM recovery, batching and precision of model execution, on a
// real model (realesr-animevideov3 from the npm packages) and real footage.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "library/model_locator.h"
#include "infer/memory_budget.h"
#include "infer/model_runner.h"
#include "infer/tile_planner.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/model_files.h"

namespace framelift::infer {
namespace {

constexpr int64_t kMiB = 1 << 20;
constexpr const char* kModel = "realesr-animevideov3-x2";

struct BudgetGuard {
  ~BudgetGuard() { set_cpu_memory_budget(0); }
};

bool have_models() { return !library::available_model_names().empty(); }

TEST(ModelRunner, ForcedOutOfMemoryHalvesTheTileAndTheFrameStillComesOut) {
  if (!have_models()) GTEST_SKIP() << "no models: run scripts/setup.sh";
  auto model = models::open_model(kModel);
  at::InferenceMode mode;
  at::Tensor frame = test::real_frame(320, 240)[0];
  at::Tensor reference = upscale_tiled(*model, frame);  // whole frame, no budget

  BudgetGuard guard;
  install_cpu_memory_tracker();
  // The whole 320x240 frame needs ~100 MiB of activations; 40 MiB forces two halvings or more.
  set_cpu_memory_budget(cpu_memory_in_use() + 40 * kMiB);
  int used = -1;
  at::Tensor tiled = upscale_tiled(*model, frame, {.tile = 0, .overlap = 16}, &used);
  set_cpu_memory_budget(0);
  std::printf("under a 40 MiB budget the frame ran in %d px tiles\n", used);
  EXPECT_GT(used, 0);
  EXPECT_LT(used, 320);
  ASSERT_EQ(tiled.sizes(), reference.sizes());
  EXPECT_GE(test::psnr(tiled, reference), 50.0);
}

TEST(ModelRunner, ABudgetTooSmallForA64PixelTileIsAClearResourceError) {
  if (!have_models()) GTEST_SKIP() << "no models: run scripts/setup.sh";
  auto model = models::open_model(kModel);
  at::InferenceMode mode;
  at::Tensor frame = test::real_frame(320, 240)[0];
  BudgetGuard guard;
  install_cpu_memory_tracker();
  set_cpu_memory_budget(cpu_memory_in_use() + 1 * kMiB);
  try {
    upscale_tiled(*model, frame);
    FAIL() << "ran under a 1 MiB budget";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Resource);
    EXPECT_NE(std::string(e.what()).find("out of memory even with"), std::string::npos) << e.what();
  }
}

TEST(ModelRunner, PlannedTileKeepsThePeakWithinTheBudget) {
  if (!have_models()) GTEST_SKIP() << "no models: run scripts/setup.sh";
  auto model = models::open_model(kModel);
  ExecutionTarget cpu = resolve_target("cpu", "");
  MemoryProfile profile = probe_memory(*model, cpu);
  std::printf("animevideov3: %.0f bytes per input pixel + %lld bytes\n", profile.per_pixel, (long long)profile.fixed);
  // A Compact network keeps a few 64-channel fp32 maps alive: hundreds of bytes per pixel.
  EXPECT_GT(profile.per_pixel, 256);
  EXPECT_LT(profile.per_pixel, 64 * 1024);
  EXPECT_EQ(plan_tile(profile, 1024 * kMiB, 240, 320, 16, 1, 1), 0);  // fits whole

  const int64_t budget = 48 * kMiB;
  const int tile = plan_tile(profile, budget, 480, 640, 16, 1, 1);
  std::printf("48 MiB for 640x480 -> %d px tiles\n", tile);
  ASSERT_GT(tile, 0);
  at::InferenceMode mode;
  at::Tensor frame = test::real_frame(640, 480)[0];
  reset_cpu_memory_peak();
  const int64_t before = cpu_memory_in_use();
  at::Tensor out = upscale_tiled(*model, frame, {.tile = tile, .overlap = 16});
  const int64_t used = cpu_memory_peak() - before;
  const int64_t output_bytes = out.numel() * 4;  // the assembled frame is not tile memory
  std::printf("peak %lld MiB (output %lld MiB) for a %lld MiB budget\n", (long long)(used / kMiB),
              (long long)(output_bytes / kMiB), (long long)(budget / kMiB));
  EXPECT_LE(used - output_bytes, budget);
  // ...and the tile is not needlessly small: twice as large would not have fit.
  EXPECT_GT(profile.bytes(int64_t(2 * tile + 32) * (2 * tile + 32), 1), budget);
}

TEST(ModelRunner, BatchedFramesEqualFramesOneByOne) {
  if (!have_models()) GTEST_SKIP() << "no models: run scripts/setup.sh";
  at::Tensor a = test::real_frame(96, 64), b = test::real_frame(96, 64).flip(3), c = test::real_frame(96, 64).flip(2);
  at::Tensor frames = at::cat({a, b, c});
  ModelRunner one(models::open_model(kModel), {.target = resolve_target("cpu", ""), .tiles = {}, .batch = 1});
  ModelRunner three(models::open_model(kModel), {.target = resolve_target("cpu", ""), .tiles = {}, .batch = 3});
  at::Tensor batched = three.run(frames);
  ASSERT_EQ(batched.sizes(), (at::IntArrayRef{3, 3, 128, 192}));
  for (int64_t i = 0; i < 3; ++i) {
    at::Tensor single = one.run(frames.narrow(0, i, 1));
    EXPECT_LT((single[0] - batched[i]).abs().max().item<float>(), 1e-4f) << "frame " << i;
  }
}

TEST(ModelRunner, Bf16OnCpuStaysCloseToFp32) {
  if (!have_models()) GTEST_SKIP() << "no models: run scripts/setup.sh";
  at::Tensor frame = test::real_frame(96, 64);
  ModelRunner fp32(models::open_model(kModel), {.target = resolve_target("cpu", "fp32"), .tiles = {}, .batch = 1});
  ModelRunner bf16(models::open_model(kModel), {.target = resolve_target("cpu", "bf16"), .tiles = {}, .batch = 1});
  at::Tensor a = fp32.run(frame), b = bf16.run(frame);
  ASSERT_EQ(b.scalar_type(), at::kFloat);  // frames leave the runner as fp32 whatever the precision
  const double db = test::psnr(a, b);
  std::printf("bf16 vs fp32: %.2f dB\n", db);
  // bf16 keeps 8 bits of mantissa: visibly the same picture, not the same bits.
  EXPECT_GE(db, 35.0);
  EXPECT_LT(db, 100.0);
}

// Counts the forward calls of the model it wraps (the probe's and the frames').
class CountingModel : public models::ImageModel {
 public:
  CountingModel(std::unique_ptr<models::ImageModel> inner, int* calls) : inner_(std::move(inner)), calls_(calls) {}
  const models::ModelInfo& info() const override { return inner_->info(); }
  at::Tensor forward(const at::Tensor& x) override {
    ++*calls_;
    return inner_->forward(x);
  }
  void to(c10::Device device, c10::ScalarType dtype) override { inner_->to(device, dtype); }

 private:
  std::unique_ptr<models::ImageModel> inner_;
  int* calls_;
};

std::unique_ptr<models::ImageModel> small_plksr() { return models::open_model((test::arch_reference_dir() / "plksr-d16-x2.pth").string()); }

// Issue 37: one 64x64 image of a PLKSR took six forward passes, five of them the memory probe's.
TEST(ModelRunner, AFrameThatFitsIsPlannedFromTheSmallProbeAloneAndATinyOneWithNone) {
  int calls = 0;
  const ExecutionTarget cpu = resolve_target("cpu", "fp32");
  {
    ModelRunner runner(std::make_unique<CountingModel>(small_plksr(), &calls), {.target = cpu, .tiles = {}, .batch = 1});
    runner.run(test::real_frame(96, 80));
    EXPECT_EQ(calls, 2) << "the 64 px probe and the frame (not a 128 px probe as well)";
    EXPECT_EQ(runner.tile_in_use(), 0);
  }
  calls = 0;
  {
    ModelRunner runner(std::make_unique<CountingModel>(small_plksr(), &calls), {.target = cpu, .tiles = {}, .batch = 1});
    runner.run(test::real_frame(64, 48));
    EXPECT_EQ(calls, 1) << "no tile is smaller than 64 px: nothing to probe for";
  }
  // The bound alone cannot say how to tile: a frame it does not fit gets the full measurement.
  calls = 0;
  CountingModel model(small_plksr(), &calls);
  model.to(c10::kCPU, at::kFloat);
  const MemoryProfile fits = probe_memory(model, cpu, {.pixels = 96 * 80, .available = int64_t(1) << 40, .batch = 1});
  EXPECT_TRUE(fits.pessimistic);
  EXPECT_EQ(calls, 1);
  const MemoryProfile full = probe_memory(model, cpu, {.pixels = 96 * 80, .available = 1024, .batch = 1});
  EXPECT_FALSE(full.pessimistic);
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace framelift::infer
