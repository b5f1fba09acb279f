// SwinIR against the upstream implementation (spandrel's SwinIR code run on Debian's
// python3-torch by tests/data/arch/make_references.py, seeded weights in the upstream layout):
// the committed small checkpoints (classical x2, lightweight x3, real-world x4 with "3conv", JPEG
// with a window of 7) are detected from their keys and shapes and, on real-frame crops of odd
// sizes, reflect-padded to the window as upstream pads them, give the upstream output within 80 dB
// in fp32. Every published configuration is detected from a state dict of its shapes; tiles
// (aligned to the window grid) stay within 50 dB of whole frames and bf16 within 40 dB of fp32;
// wrong and missing tensors are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/swin_shapes.h"
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

using Config = ft::SwinConfig;
using ft::kDirect, ft::kNearestConv, ft::kNone, ft::kPixelShuffle;

// Zeros in SwinIR's upstream layout: what detection reads is keys and shapes only.
StateDict swinir_shapes(const Config& c) {
  StateDict d;
  const int64_t n = c.window * c.window, windows = (c.img_size / c.window) * (c.img_size / c.window);
  ft::zero_conv(d, "conv_first", c.in, c.embed, 3);
  ft::zero_norm(d, "patch_embed.norm", c.embed);
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string g = "layers." + std::to_string(i);
    for (int64_t j = 0; j < c.depth; ++j) {
      const std::string b = g + ".residual_group.blocks." + std::to_string(j);
      ft::zero_norm(d, b + ".norm1", c.embed);
      d[b + ".attn.relative_position_bias_table"] = at::zeros({(2 * c.window - 1) * (2 * c.window - 1), c.heads});
      d[b + ".attn.relative_position_index"] = at::zeros({n, n}, at::kLong);
      ft::zero_linear(d, b + ".attn.qkv", c.embed, 3 * c.embed);
      ft::zero_linear(d, b + ".attn.proj", c.embed, c.embed);
      ft::zero_norm(d, b + ".norm2", c.embed);
      ft::zero_linear(d, b + ".mlp.fc1", c.embed, c.hidden);
      ft::zero_linear(d, b + ".mlp.fc2", c.hidden, c.embed);
      if (j % 2) d[b + ".attn_mask"] = at::zeros({windows, n, n});
    }
    ft::zero_residual_conv(d, g + ".conv", c);
  }
  ft::zero_swin_tail(d, c);
  return d;
}

struct Ref {
  const char* name;
  Config config;
};

// What make_references.py builds (swinir_configs there).
std::vector<Ref> references() {
  return {{"swinir-classical-x2", {.embed = 24, .layers = 2, .depth = 2, .heads = 2, .window = 8, .hidden = 48, .scale = 2,
                                   .upsampler = kPixelShuffle}},
          {"swinir-light-x3", {.embed = 12, .layers = 3, .depth = 2, .heads = 3, .window = 8, .hidden = 24, .scale = 3,
                               .upsampler = kDirect}},
          {"swinir-real-x4-3conv", {.embed = 16, .layers = 1, .depth = 2, .heads = 2, .window = 8, .hidden = 32, .scale = 4,
                                    .upsampler = kNearestConv, .three_conv = true}},
          {"swinir-jpeg-w7", {.embed = 16, .layers = 1, .depth = 2, .heads = 2, .window = 7, .hidden = 32, .scale = 1,
                              .upsampler = kNone}}};
}

TEST(ArchSwinir, MatchesTheUpstreamImplementationOnTheCommittedReferences) {
  for (const Ref& ref : references()) ft::expect_swin_reference_matches_upstream(ref.name, ref.config, "swinir");
}

TEST(ArchSwinir, EveryPublishedConfigurationIsDetected) {
  // JingyunLiang/SwinIR's main_test_swinir.py: classical SR x2/x3/x4/x8 (48 or 64 px crops),
  // lightweight x2/x3/x4, real-world x4 (and its large "3conv" model), grey and colour denoising,
  // grey and colour JPEG (window 7, 126 px crops).
  const Config classical{}, light{.embed = 60, .layers = 4, .hidden = 120, .upsampler = kDirect};
  std::vector<Config> configs;
  for (int64_t s : {2, 3, 4, 8}) {
    Config c = classical;
    c.scale = s;
    c.img_size = s == 8 ? 48 : 64;
    configs.push_back(c);
  }
  for (int64_t s : {2, 3, 4}) {
    Config c = light;
    c.scale = s;
    configs.push_back(c);
  }
  configs.push_back({.upsampler = kNearestConv});
  configs.push_back({.embed = 240, .layers = 9, .heads = 8, .hidden = 480, .upsampler = kNearestConv, .three_conv = true});
  for (int64_t in : {1, 3}) {
    configs.push_back({.in = in, .scale = 1, .upsampler = kNone, .img_size = 128});
    configs.push_back({.in = in, .window = 7, .scale = 1, .upsampler = kNone, .img_size = 126});
  }
  for (const Config& c : configs) {
    SCOPED_TRACE(testing::Message() << "embed " << c.embed << " x" << c.scale << " upsampler " << c.upsampler << " in "
                                    << c.in << " window " << c.window);
    const auto d = fm::detect(swinir_shapes(c), "test.pth");
    ASSERT_TRUE(d);
    ft::expect_swin_detected_as(*d, c, "swinir");
  }
}

TEST(ArchSwinir, TiledMatchesWholeAndBf16MatchesFp32OnARealFrame) {
  for (const char* name : {"swinir-classical-x2", "swinir-jpeg-w7"}) ft::expect_swin_tiles_and_bf16_match(name);
}

TEST(ArchSwinir, TheShiftMaskSeparatesOnlyTokensFromAcrossTheWrappedEdges) {
  // A 16 x 16 map in 8 px windows rolled by 4: the top-left window holds one region (no -100),
  // the bottom-right one four (rows and columns wrapped), and a token never masks itself.
  const at::Tensor m = fm::shifted_window_mask(16, 16, 8, 4);
  ASSERT_EQ(m.sizes(), (std::vector<int64_t>{4, 64, 64}));
  EXPECT_EQ(m[0].abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(m.diagonal(0, 1, 2).abs().sum().item<float>(), 0.0f);
  // Window 3 (bottom right): token (0, 0) and token (7, 7) come from different regions.
  EXPECT_EQ(m[3][0][63].item<float>(), -100.0f);
  EXPECT_EQ(m[3][0][3].item<float>(), 0.0f);   // (0, 3): same region
  EXPECT_EQ(m[3][0][4].item<float>(), -100.0f);  // (0, 4): across the wrapped right edge
  // Offsets run from -(ws - 1) to ws - 1 on each axis: 225 rows for a window of 8.
  const at::Tensor index = fm::relative_position_index(8);
  EXPECT_EQ(index.min().item<int64_t>(), 0);
  EXPECT_EQ(index.max().item<int64_t>(), 224);
  EXPECT_EQ(index[0][0].item<int64_t>(), 7 * 15 + 7);  // a token with itself: the centre row
}

TEST(ArchSwinir, WrongAndMissingTensorsAreRefusedByName) {
  const Config c{.embed = 24, .layers = 2, .depth = 2, .heads = 2, .hidden = 48, .scale = 2, .img_size = 16};
  StateDict d = swinir_shapes(c);
  d["layers.1.residual_group.blocks.1.mlp.fc2.weight"] = at::zeros({24, 47});
  EXPECT_EQ(refusal_of(d), "test.pth: tensor layers.1.residual_group.blocks.1.mlp.fc2.weight has shape [24, 47], expected [24, 48]");
  d = swinir_shapes(c);
  d.erase("layers.0.residual_group.blocks.1.attn.proj.bias");
  expect_refused(d, "layers.0.residual_group.blocks.1.attn.proj.bias");
  // Layers of different depths are refused with what differs, not run wrongly.
  d = swinir_shapes(c);
  for (const char* k : {"norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias", "attn.relative_position_bias_table",
                        "attn.relative_position_index", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "attn.proj.bias",
                        "mlp.fc1.weight", "mlp.fc1.bias", "mlp.fc2.weight", "mlp.fc2.bias", "attn_mask"})
    d.erase(std::string("layers.1.residual_group.blocks.1.") + k);
  expect_refused(d, "layer 1 has 1 blocks");
}

}  // namespace
