// HAT against the upstream implementation (spandrel's HAT code on Debian's python3-torch, run by
// tests/data/arch/make_references.py with seeded weights in the upstream layout; einops, which
// Debian lacks, replaced there by a rearrange of the one pattern HAT uses): the committed small
// checkpoints (x2, and x3 with HAT-S's channel ratios and an odd number of blocks) are detected
// from their keys and shapes and, on real-frame crops of odd sizes reflect-padded to the window,
// give the upstream output within 80 dB in fp32. Every published configuration is detected from a
// state dict of its shapes; tiles on the window grid stay within 50 dB of whole frames and bf16
// within 40 dB of fp32; wrong and missing tensors are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "models/swin_windows.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;
using framelift::test::expect_refused;
using framelift::test::refusal_of;

namespace {

struct Config {
  int64_t embed = 180, layers = 6, depth = 6, heads = 6, window = 16, hidden = 360, cab = 60, squeeze = 6, feat = 64, scale = 4;
};

// Zeros in HAT's upstream layout: what detection reads is keys and shapes only.
StateDict hat_shapes(const Config& c) {
  StateDict d;
  auto conv = [&](const std::string& p, int64_t i, int64_t o, int64_t k) {
    d[p + ".weight"] = at::zeros({o, i, k, k});
    d[p + ".bias"] = at::zeros({o});
  };
  auto vec = [&](const std::string& p, int64_t n) {
    d[p + ".weight"] = at::zeros({n});
    d[p + ".bias"] = at::zeros({n});
  };
  auto linear = [&](const std::string& p, int64_t i, int64_t o) {
    d[p + ".weight"] = at::zeros({o, i});
    d[p + ".bias"] = at::zeros({o});
  };
  const int64_t n = c.window * c.window, ow = c.window + c.window / 2;
  d["relative_position_index_SA"] = at::zeros({n, n}, at::kLong);
  d["relative_position_index_OCA"] = at::zeros({n, ow * ow}, at::kLong);
  conv("conv_first", 3, c.embed, 3);
  vec("patch_embed.norm", c.embed);
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string g = "layers." + std::to_string(i) + ".residual_group";
    for (int64_t j = 0; j < c.depth; ++j) {
      const std::string b = g + ".blocks." + std::to_string(j);
      vec(b + ".norm1", c.embed);
      d[b + ".attn.relative_position_bias_table"] = at::zeros({(2 * c.window - 1) * (2 * c.window - 1), c.heads});
      linear(b + ".attn.qkv", c.embed, 3 * c.embed);
      linear(b + ".attn.proj", c.embed, c.embed);
      conv(b + ".conv_block.cab.0", c.embed, c.cab, 3);
      conv(b + ".conv_block.cab.2", c.cab, c.embed, 3);
      conv(b + ".conv_block.cab.3.attention.1", c.embed, c.squeeze, 1);
      conv(b + ".conv_block.cab.3.attention.3", c.squeeze, c.embed, 1);
      vec(b + ".norm2", c.embed);
      linear(b + ".mlp.fc1", c.embed, c.hidden);
      linear(b + ".mlp.fc2", c.hidden, c.embed);
    }
    const std::string o = g + ".overlap_attn";
    d[o + ".relative_position_bias_table"] = at::zeros({(c.window + ow - 1) * (c.window + ow - 1), c.heads});
    vec(o + ".norm1", c.embed);
    linear(o + ".qkv", c.embed, 3 * c.embed);
    linear(o + ".proj", c.embed, c.embed);
    vec(o + ".norm2", c.embed);
    linear(o + ".mlp.fc1", c.embed, c.hidden);
    linear(o + ".mlp.fc2", c.hidden, c.embed);
    conv("layers." + std::to_string(i) + ".conv", c.embed, c.embed, 3);
  }
  vec("norm", c.embed);
  conv("conv_after_body", c.embed, c.embed, 3);
  conv("conv_before_upsample.0", c.embed, c.feat, 3);
  if (c.scale == 3) conv("upsample.0", c.feat, 9 * c.feat, 3);
  for (int64_t s = 1, i = 0; c.scale != 3 && s < c.scale; s *= 2, i += 2) conv("upsample." + std::to_string(i), c.feat, 4 * c.feat, 3);
  conv("conv_last", c.feat, 3, 3);
  return d;
}

void expect_detected_as(const fm::DetectedArch& d, const Config& c) {
  EXPECT_EQ(d.arch, "hat");
  EXPECT_EQ(d.scale, c.scale);
  EXPECT_EQ(d.params.get("embed_dim", 0), double(c.embed));
  EXPECT_EQ(d.params.get("layers", 0), double(c.layers));
  EXPECT_EQ(d.params.get("depth", 0), double(c.depth));
  EXPECT_EQ(d.params.get("heads", 0), double(c.heads));
  EXPECT_EQ(d.params.get("window_size", 0), double(c.window));
  EXPECT_EQ(d.params.get("overlap_window", 0), double(c.window + c.window / 2));
  EXPECT_EQ(d.params.get("mlp_hidden", 0), double(c.hidden));
  EXPECT_EQ(d.params.get("cab_channels", 0), double(c.cab));
  EXPECT_EQ(d.params.get("squeeze_channels", 0), double(c.squeeze));
  EXPECT_EQ(d.params.get("num_feat", 0), double(c.feat));
}

struct Ref {
  const char* name;
  Config config;
};

std::vector<Ref> references() {  // make_references.py's hat_configs
  return {{"hat-w8-x2", {.embed = 24, .layers = 2, .depth = 2, .heads = 2, .window = 8, .hidden = 48, .cab = 8, .squeeze = 4, .feat = 16, .scale = 2}},
          {"hat-s-w8-x3", {.embed = 24, .layers = 1, .depth = 3, .heads = 3, .window = 8, .hidden = 48, .cab = 6, .squeeze = 6, .feat = 16, .scale = 3}}};
}

TEST(ArchHat, MatchesTheUpstreamImplementationOnTheCommittedReferences) {
  framelift::infer::configure_cpu_threads(0);
  for (const Ref& ref : references()) {
    SCOPED_TRACE(ref.name);
    const fs::path pth = ft::arch_reference_dir() / (std::string(ref.name) + ".pth");
    const StateDict io = framelift::weights::load_weights(ft::arch_reference_dir() / (std::string(ref.name) + ".ref.safetensors"));
    const auto d = fm::detect(framelift::weights::load_weights(pth), pth.string());
    ASSERT_TRUE(d);
    expect_detected_as(*d, ref.config);
    auto model = fm::load_model(pth);
    EXPECT_EQ(model->info().size_multiple, ref.config.window);
    const at::Tensor y = framelift::infer::upscale_tiled(*model, io.at("input"), {.tile = 0});
    ASSERT_EQ(y.sizes(), io.at("output").sizes());
    const double db = ft::psnr_in_range(y, io.at("output"));
    std::cout << ref.name << ": fp32 vs upstream " << db << " dB\n";
    EXPECT_GE(db, 80.0);
  }
}

TEST(ArchHat, WindowIndexesAreUpstreamsIncludingItsNegativeOverlapRows) {
  // The committed checkpoint stores upstream's own index tables: framelift's recomputed ones equal
  // them (the overlap index runs negative; PyTorch wraps such rows to the table's end).
  const StateDict dict = framelift::weights::load_weights(ft::arch_reference_dir() / "hat-w8-x2.pth");
  EXPECT_TRUE(fm::relative_position_index(8).equal(dict.at("relative_position_index_SA")));
  const at::Tensor oca = fm::overlapping_window_index(8, 12);
  EXPECT_TRUE(oca.equal(dict.at("relative_position_index_OCA")));
  EXPECT_LT(oca.min().item<int64_t>(), 0);
}

TEST(ArchHat, EveryPublishedConfigurationIsDetected) {
  // XPixelGroup/HAT's options: HAT-S (embed 144, compress 24, squeeze 24), HAT (180, 3, 30) and
  // HAT-L (180, 12 groups), window 16, MLP ratio 2, x2/x3/x4; Real_HAT_GAN as HAT x4.
  std::vector<Config> configs;
  for (int64_t s : {2, 3, 4}) configs.push_back({.embed = 144, .hidden = 288, .cab = 6, .squeeze = 6, .scale = s});
  configs.push_back({.scale = 2});
  configs.push_back({});
  configs.push_back({.layers = 12});
  for (const Config& c : configs) {
    SCOPED_TRACE(testing::Message() << "embed " << c.embed << " layers " << c.layers << " x" << c.scale);
    const auto d = fm::detect(hat_shapes(c), "test.pth");
    ASSERT_TRUE(d);
    expect_detected_as(*d, c);
  }
}

TEST(ArchHat, TiledMatchesWholeAndBf16MatchesFp32OnARealFrame) {
  framelift::infer::configure_cpu_threads(0);
  auto model = fm::load_model(ft::arch_reference_dir() / "hat-w8-x2.pth");
  EXPECT_EQ(model->info().tile_overlap, 32);
  const at::Tensor frame = ft::real_frame(101, 75).squeeze(0);
  const at::Tensor whole = framelift::infer::upscale_tiled(*model, frame, {.tile = 0});
  const double tiled_db = ft::psnr_in_range(framelift::infer::upscale_tiled(*model, frame, {.tile = 40, .overlap = -1}), whole);
  const double seams_db = ft::psnr_in_range(framelift::infer::upscale_tiled(*model, frame, {.tile = 40, .overlap = 0}), whole);
  model->to(c10::kCPU, at::kBFloat16);
  const at::Tensor bf16 = framelift::infer::upscale_tiled(*model, frame.to(at::kBFloat16), {.tile = 0}).to(at::kFloat);
  const double bf16_db = ft::psnr_in_range(bf16, whole);
  std::cout << "hat-w8-x2: tiled (40 px, 32 px context) vs whole " << tiled_db << " dB, without context " << seams_db
            << " dB; bf16 vs fp32 " << bf16_db << " dB\n";
  EXPECT_GE(tiled_db, 50.0);
  EXPECT_LT(seams_db, 50.0) << "tiles without context should show seams: the check above would catch a wrong overlap";
  EXPECT_GE(bf16_db, 40.0);
}

TEST(ArchHat, WrongAndMissingTensorsAreRefusedByName) {
  const Config c{.embed = 24, .layers = 1, .depth = 2, .heads = 2, .window = 8, .hidden = 48, .cab = 8, .squeeze = 4, .feat = 16, .scale = 2};
  StateDict d = hat_shapes(c);
  d["layers.0.residual_group.overlap_attn.mlp.fc2.weight"] = at::zeros({24, 47});
  EXPECT_EQ(refusal_of(d), "test.pth: tensor layers.0.residual_group.overlap_attn.mlp.fc2.weight has shape [24, 47], expected [24, 48]");
  d = hat_shapes(c);
  d.erase("layers.0.residual_group.blocks.1.conv_block.cab.2.bias");
  expect_refused(d, "layers.0.residual_group.blocks.1.conv_block.cab.2.bias");
  // SwinIR's detector does not take a HAT file (both have layers.*.residual_group.blocks.*).
  const auto detected = fm::detect(hat_shapes(c), "test.pth");
  ASSERT_TRUE(detected);
  EXPECT_EQ(detected->arch, "hat");
}

}  // namespace
