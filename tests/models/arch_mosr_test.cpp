// MoSR against the upstream implementation (spandrel's MoSR code on Debian's python3-torch, run by
// tests/data/arch/make_references.py with seeded weights in the upstream layout): one committed
// small checkpoint per upsampler (pixel shuffle x2; geo-ensemble x4 with a 5x5 depthwise; DySample
// x3 with half the channels through the depthwise) is detected from its keys and shapes and gives
// the upstream output within 80 dB in fp32 on real crops of odd sizes. Every published
// configuration is detected; tiles stay within 50 dB of whole frames and bf16 within 40 dB of
// fp32; bad tensors are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <iostream>

#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;
using framelift::test::expect_refused;
using framelift::test::refusal_of;

namespace {

// Zeros in MoSR's layout with the pixel-shuffle upsampler.
StateDict mosr_shapes(int64_t dim, int64_t blocks, int64_t hidden, int64_t conv, int64_t k, int64_t scale) {
  StateDict d;
  auto conv2d = [&](const std::string& p, int64_t i, int64_t o, int64_t kk) {
    d[p + ".weight"] = at::zeros({o, i, kk, kk});
    d[p + ".bias"] = at::zeros({o});
  };
  conv2d("gblocks.0", 3, dim, 3);
  for (int64_t b = 1; b <= blocks; ++b) {
    const std::string p = "gblocks." + std::to_string(b);
    d[p + ".norm.weight"] = at::zeros({dim});
    d[p + ".norm.bias"] = at::zeros({dim});
    conv2d(p + ".fc1", dim, 2 * hidden, 3);
    conv2d(p + ".conv", 1, conv, k);
    conv2d(p + ".fc2", hidden, dim, 3);
  }
  conv2d("gblocks." + std::to_string(blocks + 1), dim, 2 * dim, 3);
  conv2d("gblocks." + std::to_string(blocks + 3), 2 * dim, dim, 3);
  conv2d("gblocks." + std::to_string(blocks + 5), dim, dim, 1);
  conv2d("shortcut.block.0", 3, dim, 3);
  conv2d("shortcut.block.2", dim, dim, 3);
  conv2d("shortcut.conv11", 3, dim, 1);
  conv2d("upsampler.0", dim, 3 * scale * scale, 3);
  return d;
}

TEST(ArchMosr, MatchesTheUpstreamImplementationOnTheCommittedReferences) {
  framelift::infer::configure_cpu_threads(0);
  struct Ref {
    const char* name;
    int scale, upsampler, kernel, conv_channels;
  };
  for (const Ref ref : {Ref{"mosr-d16-x2-ps", 2, 0, 7, 16}, Ref{"mosr-d16-x4-gps-k5", 4, 1, 5, 16}, Ref{"mosr-d16-x3-dys-cr0.5", 3, 2, 7, 8}}) {
    SCOPED_TRACE(ref.name);
    const fs::path pth = ft::arch_reference_dir() / (std::string(ref.name) + ".pth");
    const StateDict io = framelift::weights::load_weights(ft::arch_reference_dir() / (std::string(ref.name) + ".ref.safetensors"));
    const auto d = fm::detect(framelift::weights::load_weights(pth), pth.string());
    ASSERT_TRUE(d);
    EXPECT_EQ(d->arch, "mosr");
    EXPECT_EQ(d->scale, ref.scale);
    EXPECT_EQ(d->params.get("dim", 0), 16);
    EXPECT_EQ(d->params.get("n_block", 0), 2);
    EXPECT_EQ(d->params.get("hidden", 0), 24);  // int(1.5 * 16)
    EXPECT_EQ(d->params.get("conv_channels", 0), ref.conv_channels);
    EXPECT_EQ(d->params.get("kernel_size", 0), ref.kernel);
    EXPECT_EQ(d->params.get("upsampler", -1), ref.upsampler);
    auto model = fm::load_model(pth);
    const at::Tensor y = model->forward(io.at("input"));
    ASSERT_EQ(y.sizes(), io.at("output").sizes());
    const double db = ft::psnr_in_range(y, io.at("output"));
    std::cout << ref.name << ": fp32 vs upstream " << db << " dB\n";
    EXPECT_GE(db, 80.0);
  }
}

TEST(ArchMosr, EveryPublishedConfigurationIsDetected) {
  // umzi2's MoSR presets: mosr (dim 64, 24 blocks), mosr_t (64, 5 blocks), expansion 1.5, kernel 7,
  // x2/x4 (x1 for restoration).
  for (int64_t blocks : {24, 5})
    for (int64_t s : {1, 2, 4}) {
      SCOPED_TRACE(testing::Message() << blocks << " blocks x" << s);
      const auto d = fm::detect(mosr_shapes(64, blocks, 96, 64, 7, s), "test.pth");
      ASSERT_TRUE(d);
      EXPECT_EQ(d->arch, "mosr");
      EXPECT_EQ(d->scale, s);
      EXPECT_EQ(d->params.get("n_block", 0), double(blocks));
      EXPECT_EQ(d->params.get("hidden", 0), 96);
    }
}

TEST(ArchMosr, TiledMatchesWholeAndBf16MatchesFp32OnARealFrame) {
  framelift::infer::configure_cpu_threads(0);
  for (const char* name : {"mosr-d16-x2-ps", "mosr-d16-x3-dys-cr0.5"}) {
    SCOPED_TRACE(name);
    auto model = fm::load_model(ft::arch_reference_dir() / (std::string(name) + ".pth"));
    EXPECT_EQ(model->info().tile_overlap, 48);
    const at::Tensor frame = ft::real_frame(201, 155).squeeze(0);
    const at::Tensor whole = framelift::infer::upscale_tiled(*model, frame, {.tile = 0});
    const double tiled_db = ft::psnr_in_range(framelift::infer::upscale_tiled(*model, frame, {.tile = 40, .overlap = -1}), whole);
    const double seams_db = ft::psnr_in_range(framelift::infer::upscale_tiled(*model, frame, {.tile = 40, .overlap = 0}), whole);
    model->to(c10::kCPU, at::kBFloat16);
    const double bf16_db = ft::psnr_in_range(model->forward(frame.unsqueeze(0).to(at::kBFloat16)).squeeze(0).to(at::kFloat), whole);
    std::cout << name << ": tiled (40 px, 48 px context) vs whole " << tiled_db << " dB, without context " << seams_db
              << " dB; bf16 vs fp32 " << bf16_db << " dB\n";
    EXPECT_GE(tiled_db, 50.0);
    EXPECT_LT(seams_db, 50.0);
    EXPECT_GE(bf16_db, 40.0);
  }
}

TEST(ArchMosr, WrongAndMissingTensorsAreRefusedByName) {
  StateDict d = mosr_shapes(16, 2, 24, 16, 7, 2);
  d["gblocks.2.conv.weight"] = at::zeros({16, 1, 7, 5});
  EXPECT_EQ(refusal_of(d), "test.pth: tensor gblocks.2.conv.weight has shape [16, 1, 7, 5], expected [16, 1, 7, 7]");
  d = mosr_shapes(16, 2, 24, 16, 7, 2);
  d.erase("shortcut.conv11.bias");
  expect_refused(d, "shortcut.conv11.bias");
}

}  // namespace
