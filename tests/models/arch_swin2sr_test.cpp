// Swin2SR against the upstream implementation (spandrel's Swin2SR run on Debian's python3-torch
// by tests/data/arch/make_references.py, seeded weights in the upstream layout): the committed
// small checkpoints (classical x2, lightweight x3, real-world x4 with "3conv", JPEG with a window
// of 7) are detected from their keys and shapes and, on real-frame crops of odd sizes,
// reflect-padded to the window as upstream pads them, give the upstream output within 80 dB in
// fp32. Every published configuration is detected from a state dict of its shapes; tiles
// (aligned to the window grid) stay within 50 dB of whole frames and bf16 within 40 dB of fp32;
// wrong and missing tensors and the unsupported reconstructions are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>
#include <iostream>

#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/swin_shapes.h"
#include "models/architecture_registry.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;

namespace {

using Config = ft::SwinConfig;
using ft::kDirect, ft::kNearestConv, ft::kNone, ft::kPixelShuffle;

// Zeros in Swin2SR's upstream layout: what detection reads is keys and shapes only.
StateDict swin2sr_shapes(const Config& c) {
  StateDict d;
  const int64_t n = c.window * c.window, span = 2 * c.window - 1, windows = (c.img_size / c.window) * (c.img_size / c.window);
  ft::zero_conv(d, "conv_first", c.in, c.embed, 3);
  ft::zero_conv(d, "patch_embed.proj", c.embed, c.embed, 1);
  ft::zero_norm(d, "patch_embed.norm", c.embed);
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string g = "layers." + std::to_string(i);
    for (int64_t j = 0; j < c.depth; ++j) {
      const std::string b = g + ".residual_group.blocks." + std::to_string(j);
      ft::zero_norm(d, b + ".norm1", c.embed);
      d[b + ".attn.logit_scale"] = at::zeros({c.heads, 1, 1});
      ft::zero_linear(d, b + ".attn.cpb_mlp.0", 2, 512);
      d[b + ".attn.cpb_mlp.2.weight"] = at::zeros({c.heads, 512});
      d[b + ".attn.relative_coords_table"] = at::zeros({1, span, span, 2});
      d[b + ".attn.relative_position_index"] = at::zeros({n, n}, at::kLong);
      d[b + ".attn.qkv.weight"] = at::zeros({3 * c.embed, c.embed});
      d[b + ".attn.q_bias"] = at::zeros({c.embed});
      d[b + ".attn.v_bias"] = at::zeros({c.embed});
      ft::zero_linear(d, b + ".attn.proj", c.embed, c.embed);
      ft::zero_norm(d, b + ".norm2", c.embed);
      ft::zero_linear(d, b + ".mlp.fc1", c.embed, c.hidden);
      ft::zero_linear(d, b + ".mlp.fc2", c.hidden, c.embed);
      if (j % 2) d[b + ".attn_mask"] = at::zeros({windows, n, n});
    }
    ft::zero_residual_conv(d, g + ".conv", c);
    ft::zero_conv(d, g + ".patch_embed.proj", c.embed, c.embed, 1);
  }
  ft::zero_swin_tail(d, c);
  return d;
}

struct Ref {
  const char* name;
  Config config;
};

// What make_references.py builds (swin2sr_configs there).
std::vector<Ref> references() {
  return {{"swin2sr-classical-x2", {.embed = 16, .layers = 2, .depth = 2, .heads = 2, .window = 8, .hidden = 32, .scale = 2,
                                    .upsampler = kPixelShuffle}},
          {"swin2sr-light-x3", {.embed = 12, .layers = 3, .depth = 2, .heads = 3, .window = 8, .hidden = 24, .scale = 3,
                                .upsampler = kDirect}},
          {"swin2sr-real-x4-3conv", {.embed = 16, .layers = 1, .depth = 2, .heads = 2, .window = 8, .hidden = 32, .scale = 4,
                                     .upsampler = kNearestConv, .three_conv = true}},
          {"swin2sr-jpeg-w7", {.embed = 16, .layers = 1, .depth = 2, .heads = 2, .window = 7, .hidden = 32, .scale = 1,
                               .upsampler = kNone}}};
}

TEST(ArchSwin2sr, MatchesTheUpstreamImplementationOnTheCommittedReferences) {
  for (const Ref& ref : references()) ft::expect_swin_reference_matches_upstream(ref.name, ref.config, "swin2sr");
}

TEST(ArchSwin2sr, EveryPublishedConfigurationIsDetected) {
  // mv-lab/swin2sr's main_test_swin2sr.py: classical SR x2/x4 (embed 180, 6 layers of 6, 6 heads,
  // window 8, 64 px crops), lightweight x2 (embed 60, 4 layers, pixelshuffledirect), real-world
  // x4 (nearest+conv), JPEG (window 7, 126 px crops, scale 1).
  std::vector<Config> configs;
  for (int64_t s : {2, 4}) configs.push_back({.scale = s});
  configs.push_back({.embed = 60, .layers = 4, .hidden = 120, .scale = 2, .upsampler = kDirect});
  configs.push_back({.upsampler = kNearestConv});
  configs.push_back({.window = 7, .scale = 1, .upsampler = kNone, .img_size = 126});
  for (const Config& c : configs) {
    SCOPED_TRACE(testing::Message() << "embed " << c.embed << " x" << c.scale << " upsampler " << c.upsampler << " window "
                                    << c.window);
    const auto d = fm::detect(swin2sr_shapes(c), "test.pth");
    ASSERT_TRUE(d);
    ft::expect_swin_detected_as(*d, c, "swin2sr");
  }
}

TEST(ArchSwin2sr, TiledMatchesWholeAndBf16MatchesFp32OnARealFrame) {
  for (const char* name : {"swin2sr-classical-x2", "swin2sr-jpeg-w7"}) ft::expect_swin_tiles_and_bf16_match(name);
}

TEST(ArchSwin2sr, WrongMissingAndUnsupportedTensorsAreRefusedByName) {
  const Config c = references()[0].config;
  StateDict d = swin2sr_shapes(c);
  d["layers.1.residual_group.blocks.1.attn.cpb_mlp.2.weight"] = at::zeros({3, 512});
  ft::expect_refused(d, "test.pth: tensor layers.1.residual_group.blocks.1.attn.cpb_mlp.2.weight has shape [3, 512], expected [2, 512]");
  d = swin2sr_shapes(c);
  d.erase("layers.0.residual_group.blocks.1.attn.v_bias");
  ft::expect_refused(d, "layers.0.residual_group.blocks.1.attn.v_bias");
  d = swin2sr_shapes(c);
  d.erase("layers.1.patch_embed.proj.weight");
  ft::expect_refused(d, "layers.1.patch_embed.proj.weight");
  // Compressed SR's auxiliary bicubic branch: refused with the reason, not run without it.
  d = swin2sr_shapes(c);
  d["conv_bicubic.weight"] = at::zeros({64, 3, 3, 3});
  ft::expect_refused(d, "test.pth: Swin2SR layout: the pixelshuffle_aux reconstruction (compressed SR) is not supported");
}

}  // namespace
