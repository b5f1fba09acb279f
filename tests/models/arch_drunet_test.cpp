// DRUNet against the upstream implementation (spandrel's DRUNet run on Debian's python3-torch by
// tests/data/arch/make_references.py, seeded weights in the upstream layout, the noise plane made
// as spandrel's wrapper makes it): the committed small colour checkpoint is detected from its keys
// and shapes and gives the upstream output within 80 dB in fp32, at the default sigma 15 and, set
// through NoiseLevelInput (the denoise stage's sigma=), at 50. Every published configuration is
// detected from a state dict of its shapes; tiles stay within 50 dB of whole frames and bf16
// within 40 dB of fp32; wrong and missing tensors and the unpublished up/down modes are refused.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <array>
#include <filesystem>
#include <iostream>

#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "models/noise_level.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;
using framelift::test::expect_refused;

namespace {

struct Config {
  int64_t in = 3;  // image channels; the head takes one more, the noise plane
  std::array<int64_t, 4> nc{64, 128, 256, 512};
  int64_t nb = 4;
};

// Zeros in DRUNet's upstream layout (no biases anywhere).
StateDict drunet_shapes(const Config& c) {
  StateDict d;
  auto conv = [&](const std::string& p, int64_t i, int64_t o, int64_t k) { d[p + ".weight"] = at::zeros({o, i, k, k}); };
  auto blocks = [&](const std::string& p, int64_t first, int64_t ch) {
    for (int64_t i = first; i < first + c.nb; ++i) {
      conv(p + "." + std::to_string(i) + ".res.0", ch, ch, 3);
      conv(p + "." + std::to_string(i) + ".res.2", ch, ch, 3);
    }
  };
  conv("m_head", c.in + 1, c.nc[0], 3);
  for (int l = 0; l < 3; ++l) {
    const std::string down = "m_down" + std::to_string(l + 1), up = "m_up" + std::to_string(l + 1);
    blocks(down, 0, c.nc[l]);
    conv(down + "." + std::to_string(c.nb), c.nc[l], c.nc[l + 1], 2);
    d[up + ".0.weight"] = at::zeros({c.nc[l + 1], c.nc[l], 2, 2});  // transposed: [in, out, k, k]
    blocks(up, 1, c.nc[l]);
  }
  blocks("m_body", 0, c.nc[3]);
  conv("m_tail", c.nc[0], c.in, 3);
  return d;
}

void expect_detected_as(const fm::DetectedArch& d, const Config& c) {
  EXPECT_EQ(d.arch, "drunet");
  EXPECT_EQ(d.scale, 1);
  EXPECT_EQ(d.in_channels, c.in);
  EXPECT_EQ(d.out_channels, c.in);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(d.params.get("nc" + std::to_string(i), 0), double(c.nc[i])) << i;
  EXPECT_EQ(d.params.get("nb", 0), double(c.nb));
  EXPECT_EQ(d.params.get("noise_level", 0), 15.0);  // upstream's and spandrel's default
}

const char* kReference = "drunet-color-nc8";
const Config kReferenceConfig{.nc = {8, 16, 32, 48}, .nb = 2};  // make_references.py's drunet_configs

TEST(ArchDrunet, MatchesTheUpstreamImplementationAtTwoNoiseLevels) {
  framelift::infer::configure_cpu_threads(0);
  const fs::path pth = ft::arch_reference_dir() / (std::string(kReference) + ".pth");
  const StateDict io = framelift::weights::load_weights(ft::arch_reference_dir() / (std::string(kReference) + ".ref.safetensors"));
  const auto d = fm::detect(framelift::weights::load_weights(pth), pth.string());
  ASSERT_TRUE(d);
  expect_detected_as(*d, kReferenceConfig);
  auto model = fm::load_model(pth);
  EXPECT_EQ(model->info().size_multiple, 8);
  EXPECT_EQ(model->info().in_channels, 3);
  const at::Tensor y = framelift::infer::upscale_tiled(*model, io.at("input"), {.tile = 0});
  ASSERT_EQ(y.sizes(), io.at("output").sizes());
  const double db = ft::psnr_in_range(y, io.at("output"));

  auto* conditioned = dynamic_cast<fm::NoiseLevelInput*>(model.get());
  ASSERT_NE(conditioned, nullptr);
  EXPECT_EQ(conditioned->noise_level(), 15.0);
  conditioned->set_noise_level(50);
  const at::Tensor y50 = framelift::infer::upscale_tiled(*model, io.at("input"), {.tile = 0});
  const double db50 = ft::psnr_in_range(y50, io.at("output_sigma50"));
  // The two levels must differ for the second comparison to show that the level reaches the plane.
  const double levels_apart = ft::psnr_in_range(io.at("output_sigma50"), io.at("output"));
  std::cout << kReference << ": fp32 vs upstream " << db << " dB at sigma 15, " << db50 << " dB at sigma 50 (upstream's two "
            << levels_apart << " dB apart)\n";
  EXPECT_GE(db, 80.0);
  EXPECT_GE(db50, 80.0);
  EXPECT_LT(levels_apart, 60.0);
}

TEST(ArchDrunet, EveryPublishedConfigurationIsDetected) {
  // cszn/DPIR: drunet_color and drunet_gray, nc [64, 128, 256, 512], nb 4.
  for (int64_t in : {1, 3}) {
    SCOPED_TRACE(in);
    const Config c{.in = in};
    const auto d = fm::detect(drunet_shapes(c), "test.pth");
    ASSERT_TRUE(d);
    expect_detected_as(*d, c);
  }
}

TEST(ArchDrunet, TiledMatchesWholeAndBf16MatchesFp32OnARealFrame) {
  framelift::infer::configure_cpu_threads(0);
  auto model = fm::load_model(ft::arch_reference_dir() / (std::string(kReference) + ".pth"));
  EXPECT_EQ(model->info().tile_overlap, 32);
  const at::Tensor frame = ft::real_frame(101, 75).squeeze(0);
  const at::Tensor whole = framelift::infer::upscale_tiled(*model, frame, {.tile = 0});
  const at::Tensor tiled = framelift::infer::upscale_tiled(*model, frame, {.tile = 40, .overlap = -1});
  const double tiled_db = ft::psnr_in_range(tiled, whole);
  const double seams_db = ft::psnr_in_range(framelift::infer::upscale_tiled(*model, frame, {.tile = 40, .overlap = 0}), whole);
  model->to(c10::kCPU, at::kBFloat16);
  const at::Tensor bf16 = framelift::infer::upscale_tiled(*model, frame.to(at::kBFloat16), {.tile = 0}).to(at::kFloat);
  const double bf16_db = ft::psnr_in_range(bf16, whole);
  std::cout << kReference << ": tiled (40 px, 32 px context) vs whole " << tiled_db << " dB, without context " << seams_db
            << " dB; bf16 vs fp32 " << bf16_db << " dB\n";
  EXPECT_LT(seams_db, 50.0) << "tiles without context should show seams: the check below would catch a wrong overlap";
  EXPECT_GE(tiled_db, 50.0);
  EXPECT_GE(bf16_db, 40.0);
}

TEST(ArchDrunet, WrongAndMissingTensorsAndOtherModesAreRefusedByName) {
  const Config c{.nc = {8, 16, 32, 48}, .nb = 2};
  StateDict d = drunet_shapes(c);
  d["m_up2.2.res.2.weight"] = at::zeros({16, 15, 3, 3});
  expect_refused(d, "test.pth: tensor m_up2.2.res.2.weight has shape [16, 15, 3, 3], expected [16, 16, 3, 3]");
  d = drunet_shapes(c);
  d.erase("m_down3.1.res.0.weight");
  expect_refused(d, "m_down3.1.res.0.weight");
  d = drunet_shapes(c);
  d["m_body.0.res.0.bias"] = at::zeros({48});  // a tensor the network does not have
  expect_refused(d, "m_body.0.res.0.bias");
  // Pooling downsamplers have no m_down1.nb convolution; spandrel could not tell avg from max.
  d = drunet_shapes(c);
  d.erase("m_down1.2.weight");
  expect_refused(d, "pooling");
  d = drunet_shapes(c);
  d["m_up3.0.weight"] = at::zeros({48 * 4, 32, 3, 3});
  expect_refused(d, "pixelshuffle");
}

}  // namespace
