// NAFNet against the upstream implementation (spandrel's NAFNet run on Debian's python3-torch by
// tests/data/arch/make_references.py, seeded weights in the upstream layout): the committed small
// checkpoint is detected from its keys and shapes and, on a real-frame crop of odd size (zero-
// padded to 2^levels inside the network, as upstream pads), gives the upstream output within
// 80 dB in fp32. Every published configuration is detected from a state dict of its shapes; bf16
// stays within 40 dB of fp32; tiles on the frame's grid of 2^levels stay within 50 dB of whole
// frames once the global channel attention (which no context can make exact) is taken out;
// wrong and missing tensors are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>
#include <iostream>
#include <vector>

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

namespace {

struct Config {
  int64_t in = 3, width = 32;
  std::vector<int64_t> enc{2, 2, 4, 8};
  int64_t middle = 12;
  std::vector<int64_t> dec{2, 2, 2, 2};
};

// Zeros in NAFNet's upstream layout.
StateDict nafnet_shapes(const Config& c) {
  StateDict d;
  auto conv = [&](const std::string& p, int64_t i, int64_t o, int64_t k, bool bias = true) {
    d[p + ".weight"] = at::zeros({o, i, k, k});
    if (bias) d[p + ".bias"] = at::zeros({o});
  };
  auto block = [&](const std::string& p, int64_t ch) {
    for (const char* n : {".norm1", ".norm2"}) {
      d[p + n + ".weight"] = at::zeros({ch});
      d[p + n + ".bias"] = at::zeros({ch});
    }
    conv(p + ".conv1", ch, 2 * ch, 1);
    d[p + ".conv2.weight"] = at::zeros({2 * ch, 1, 3, 3});
    d[p + ".conv2.bias"] = at::zeros({2 * ch});
    conv(p + ".conv3", ch, ch, 1);
    conv(p + ".sca.1", ch, ch, 1);
    conv(p + ".conv4", ch, 2 * ch, 1);
    conv(p + ".conv5", ch, ch, 1);
    d[p + ".beta"] = at::zeros({1, ch, 1, 1});
    d[p + ".gamma"] = at::zeros({1, ch, 1, 1});
  };
  int64_t ch = c.width;
  conv("intro", c.in, ch, 3);
  for (size_t i = 0; i < c.enc.size(); ++i, ch *= 2) {
    for (int64_t j = 0; j < c.enc[i]; ++j) block("encoders." + std::to_string(i) + "." + std::to_string(j), ch);
    conv("downs." + std::to_string(i), ch, 2 * ch, 2);
  }
  for (int64_t j = 0; j < c.middle; ++j) block("middle_blks." + std::to_string(j), ch);
  for (size_t i = 0; i < c.dec.size(); ++i, ch /= 2) {
    conv("ups." + std::to_string(i) + ".0", ch, 2 * ch, 1, false);
    for (int64_t j = 0; j < c.dec[i]; ++j) block("decoders." + std::to_string(i) + "." + std::to_string(j), ch / 2);
  }
  conv("ending", ch, c.in, 3);
  return d;
}

void expect_detected_as(const fm::DetectedArch& d, const Config& c) {
  EXPECT_EQ(d.arch, "nafnet");
  EXPECT_EQ(d.scale, 1);
  EXPECT_EQ(d.in_channels, c.in);
  EXPECT_EQ(d.out_channels, c.in);
  EXPECT_EQ(d.params.get("width", 0), double(c.width));
  EXPECT_EQ(d.params.get("levels", 0), double(c.enc.size()));
  for (size_t i = 0; i < c.enc.size(); ++i) EXPECT_EQ(d.params.get("enc" + std::to_string(i), -1), double(c.enc[i])) << i;
  EXPECT_EQ(d.params.get("middle", -1), double(c.middle));
  for (size_t i = 0; i < c.dec.size(); ++i) EXPECT_EQ(d.params.get("dec" + std::to_string(i), -1), double(c.dec[i])) << i;
}

const char* kReference = "nafnet-w8";
const Config kReferenceConfig{.width = 8, .enc = {1, 2}, .middle = 1, .dec = {1, 1}};  // make_references.py's nafnet_configs

TEST(ArchNafnet, MatchesTheUpstreamImplementationOnTheCommittedReference) {
  framelift::infer::configure_cpu_threads(0);
  const fs::path pth = ft::arch_reference_dir() / (std::string(kReference) + ".pth");
  const StateDict io = framelift::weights::load_weights(ft::arch_reference_dir() / (std::string(kReference) + ".ref.safetensors"));
  const auto d = fm::detect(framelift::weights::load_weights(pth), pth.string());
  ASSERT_TRUE(d);
  expect_detected_as(*d, kReferenceConfig);
  auto model = fm::load_model(pth);
  EXPECT_EQ(model->info().size_multiple, 1);  // it zero-pads itself, as upstream,
  EXPECT_EQ(model->info().tile_grid, 4);      // and tiles stay on its grid of two halvings
  const at::Tensor y = framelift::infer::upscale_tiled(*model, io.at("input"), {.tile = 0});
  ASSERT_EQ(y.sizes(), io.at("output").sizes());
  const double db = ft::psnr_in_range(y, io.at("output"));
  std::cout << kReference << ": fp32 vs upstream " << db << " dB\n";
  EXPECT_GE(db, 80.0);
}

TEST(ArchNafnet, EveryPublishedConfigurationIsDetected) {
  // megvii-research/NAFNet's options: SIDD width 32 and 64 (enc [2, 2, 4, 8], middle 12, dec
  // [2, 2, 2, 2]); GoPro width 32 and 64 and REDS width 64 (enc [1, 1, 1, 28], middle 1, dec [1, 1, 1, 1]).
  std::vector<Config> configs;
  for (int64_t width : {32, 64}) {
    configs.push_back({.width = width});
    configs.push_back({.width = width, .enc = {1, 1, 1, 28}, .middle = 1, .dec = {1, 1, 1, 1}});
  }
  for (const Config& c : configs) {
    SCOPED_TRACE(testing::Message() << "width " << c.width << " middle " << c.middle);
    const auto d = fm::detect(nafnet_shapes(c), "test.pth");
    ASSERT_TRUE(d);
    expect_detected_as(*d, c);
  }
}

// The reference's weights with every block's channel attention made the identity (sca.1 weights
// 0, biases 1): what is left is local, the convolutions whose context the tile overlap is for.
StateDict without_channel_attention(StateDict d) {
  for (auto& [key, t] : d) {
    if (key.find(".sca.1.weight") != std::string::npos) t = at::zeros_like(t);
    if (key.find(".sca.1.bias") != std::string::npos) t = at::ones_like(t);
  }
  return d;
}

double tiled_vs_whole(fm::ImageModel& model, const at::Tensor& frame, int overlap) {
  const at::Tensor whole = framelift::infer::upscale_tiled(model, frame, {.tile = 0});
  return ft::psnr_in_range(framelift::infer::upscale_tiled(model, frame, {.tile = 40, .overlap = overlap}), whole);
}

TEST(ArchNafnet, TilesMatchWholeButForTheGlobalAttentionAndBf16MatchesFp32OnARealFrame) {
  framelift::infer::configure_cpu_threads(0);
  const fs::path pth = ft::arch_reference_dir() / (std::string(kReference) + ".pth");
  auto model = fm::load_model(pth);
  EXPECT_EQ(model->info().tile_overlap, 32);
  const at::Tensor frame = ft::real_frame(101, 75).squeeze(0);
  // Each tile's channel attention averages over the tile, not the frame: that alone moves the
  // output more than any seam (44.6 dB measured; the bound guards against worse). framelift runs
  // whole frames whenever memory allows (tile=0, the default); tiles are what a small budget leaves.
  const double global_db = tiled_vs_whole(*model, frame, -1);
  auto local = fm::build_model(without_channel_attention(framelift::weights::load_weights(pth)), pth.string());
  const double local_db = tiled_vs_whole(*local, frame, -1), seams_db = tiled_vs_whole(*local, frame, 0);
  const at::Tensor whole = framelift::infer::upscale_tiled(*model, frame, {.tile = 0});
  model->to(c10::kCPU, at::kBFloat16);
  const at::Tensor bf16 = framelift::infer::upscale_tiled(*model, frame.to(at::kBFloat16), {.tile = 0}).to(at::kFloat);
  const double bf16_db = ft::psnr_in_range(bf16, whole);
  std::cout << kReference << ": tiled (40 px, 32 px context) vs whole " << global_db << " dB; without the global attention "
            << local_db << " dB, and " << seams_db << " dB without context; bf16 vs fp32 " << bf16_db << " dB\n";
  EXPECT_LT(seams_db, 50.0) << "tiles without context should show seams: the check below would catch a wrong overlap";
  EXPECT_GE(local_db, 50.0);
  EXPECT_GE(global_db, 40.0);
  EXPECT_GE(bf16_db, 40.0);
}

TEST(ArchNafnet, WrongAndMissingTensorsAreRefusedByName) {
  StateDict d = nafnet_shapes(kReferenceConfig);
  d["encoders.1.1.conv2.weight"] = at::zeros({32, 16, 3, 3});  // a full, not depthwise, convolution
  expect_refused(d, "test.pth: tensor encoders.1.1.conv2.weight has shape [32, 16, 3, 3], expected [32, 1, 3, 3]");
  d = nafnet_shapes(kReferenceConfig);
  d.erase("decoders.0.0.gamma");
  expect_refused(d, "decoders.0.0.gamma");
  d = nafnet_shapes(kReferenceConfig);
  d.erase("ups.1.0.weight");
  expect_refused(d, "2 downsamplers but 1 upsamplers");
}

}  // namespace
