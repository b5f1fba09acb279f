// SRFormer against the upstream implementation (HVision-NKU/SRFormer's own srformer_arch.py, run on
// Debian's python3-torch by tests/data/arch/make_references.py --srformer with seeded weights in
// the upstream layout): the committed small checkpoints (SRFormer-light's layout at x3 with window
// 16, a classical x2 with window 10, whose odd half shift of 5 is window 22's case, and a
// nearest+conv x4 with 3conv) are detected from their keys and shapes and, on real-frame crops of
// odd sizes reflect-padded to the window as upstream pads them, give the upstream output within
// 80 dB in fp32. The permuted bias index and shift masks equal the buffers upstream stores. Every
// published configuration is detected from a state dict of its shapes; tiles on the window grid
// stay within 50 dB of whole frames and bf16 within 40 dB of fp32; wrong and missing tensors and
// the unsupported variants are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "models/srformer_windows.h"
#include "models/swin_shapes.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;

namespace {

using Config = ft::SwinConfig;
using ft::kDirect, ft::kNearestConv, ft::kNone, ft::kPixelShuffle;

// Zeros in SRFormer's upstream layout: what detection reads is keys and shapes only.
StateDict srformer_shapes(const Config& c) {
  StateDict d;
  const int64_t n = c.window * c.window, keys = n / 4, half = c.window / 2, span = 2 * half - 1;
  const int64_t crop = (c.img_size + c.window - 1) / c.window * c.window, windows = (crop / c.window) * (crop / c.window);
  ft::zero_conv(d, "conv_first", c.in, c.embed, 3);
  ft::zero_norm(d, "patch_embed.norm", c.embed);
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string g = "layers." + std::to_string(i);
    for (int64_t j = 0; j < c.depth; ++j) {
      const std::string b = g + ".residual_group.blocks." + std::to_string(j);
      ft::zero_norm(d, b + ".norm1", c.embed);
      d[b + ".attn.relative_position_bias_table"] = at::zeros({span * span, c.heads});
      d[b + ".attn.aligned_relative_position_index"] = at::zeros({n, keys}, at::kLong);
      ft::zero_linear(d, b + ".attn.kv", c.embed, c.embed / 2);
      ft::zero_linear(d, b + ".attn.q", c.embed, c.embed);
      ft::zero_linear(d, b + ".attn.proj", c.embed, c.embed);
      ft::zero_norm(d, b + ".norm2", c.embed);
      ft::zero_linear(d, b + ".mlp.fc1", c.embed, c.hidden);
      d[b + ".mlp.dwconv.depthwise_conv.0.weight"] = at::zeros({c.hidden, 1, 5, 5});
      d[b + ".mlp.dwconv.depthwise_conv.0.bias"] = at::zeros({c.hidden});
      ft::zero_linear(d, b + ".mlp.fc2", c.hidden, c.embed);
      if (j % 2) d[b + ".attn_mask"] = at::zeros({windows, n, keys});
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

// What make_references.py builds (srformer_configs there).
std::vector<Ref> references() {
  return {{"srformer-light-x3", {.embed = 24, .layers = 1, .depth = 2, .heads = 2, .window = 16, .hidden = 48, .scale = 3,
                                 .upsampler = kDirect, .img_size = 32}},
          {"srformer-x2-w10", {.embed = 16, .layers = 2, .depth = 2, .heads = 2, .window = 10, .hidden = 32, .scale = 2,
                               .upsampler = kPixelShuffle, .img_size = 20}},
          {"srformer-real-x4-3conv", {.embed = 16, .layers = 1, .depth = 2, .heads = 4, .window = 12, .hidden = 32, .scale = 4,
                                      .upsampler = kNearestConv, .three_conv = true, .img_size = 24}}};
}

TEST(ArchSrformer, MatchesTheUpstreamImplementationOnTheCommittedReferences) {
  for (const Ref& ref : references()) ft::expect_swin_reference_matches_upstream(ref.name, ref.config, "srformer");
}

TEST(ArchSrformer, PermutedIndexAndShiftMasksAreUpstreams) {
  // Each committed checkpoint stores upstream's aligned_relative_position_index and the shift
  // mask of its training crop (two windows wide); framelift's recomputed ones equal them. Window
  // 10's half shift is odd (5): its key bands sit at 3 from the half map's end, not 2.5.
  for (const Ref& ref : references()) {
    SCOPED_TRACE(ref.name);
    const StateDict dict = framelift::weights::load_weights(ft::arch_reference_dir() / (std::string(ref.name) + ".pth"));
    const int64_t ws = ref.config.window, crop = ref.config.img_size;
    const std::string b = "layers.0.residual_group.blocks.";
    EXPECT_TRUE(fm::permuted_window_index(ws).equal(dict.at(b + "0.attn.aligned_relative_position_index")));
    EXPECT_TRUE(fm::permuted_shift_mask(crop, crop, ws, ws / 2).equal(dict.at(b + "1.attn_mask")));
  }
}

TEST(ArchSrformer, EveryPublishedConfigurationIsDetected) {
  // HVision-NKU/SRFormer's options: SRFormer (embed 180, 6 groups of 6, 6 heads, MLP ratio 2,
  // pixelshuffle) x2/x3/x4 with window 22 (test files, 64 px crops) or 24 (training files, 48 px);
  // SRFormer-light (embed 60, 4 groups of 6, window 16, pixelshuffledirect) x2/x3/x4; the
  // real-world SRFormer-S x4 (window 24, pixelshuffle). Then upstream's other reconstructions
  // (nearest+conv x4, none at x1) and 3conv.
  std::vector<Config> configs;
  for (int64_t s : {2, 3, 4}) configs.push_back({.window = 22, .scale = s, .img_size = 64});
  for (int64_t s : {2, 3, 4}) configs.push_back({.window = 24, .scale = s, .img_size = 48});
  for (int64_t s : {2, 3, 4})
    configs.push_back({.embed = 60, .layers = 4, .window = 16, .hidden = 120, .scale = s, .upsampler = kDirect});
  configs.push_back({.layers = 2, .depth = 2, .window = 24, .upsampler = kNearestConv, .three_conv = true, .img_size = 48});
  configs.push_back({.layers = 2, .depth = 2, .window = 16, .scale = 1, .upsampler = kNone});
  for (const Config& c : configs) {
    SCOPED_TRACE(testing::Message() << "embed " << c.embed << " x" << c.scale << " upsampler " << c.upsampler << " window "
                                    << c.window);
    const auto d = fm::detect(srformer_shapes(c), "test.pth");
    ASSERT_TRUE(d);
    ft::expect_swin_detected_as(*d, c, "srformer");
  }
}

TEST(ArchSrformer, TiledMatchesWholeAndBf16MatchesFp32OnARealFrame) {
  for (const char* name : {"srformer-light-x3", "srformer-x2-w10"}) ft::expect_swin_tiles_and_bf16_match(name);
}

TEST(ArchSrformer, WrongMissingAndUnsupportedTensorsAreRefusedByName) {
  const Config c = references()[1].config;
  StateDict d = srformer_shapes(c);
  d["layers.1.residual_group.blocks.0.attn.kv.weight"] = at::zeros({16, 16});
  ft::expect_refused(d, "test.pth: tensor layers.1.residual_group.blocks.0.attn.kv.weight has shape [16, 16], expected [8, 16]");
  d = srformer_shapes(c);
  d.erase("layers.0.residual_group.blocks.1.mlp.dwconv.depthwise_conv.0.bias");
  ft::expect_refused(d, "layers.0.residual_group.blocks.1.mlp.dwconv.depthwise_conv.0.bias");
  // qkv_bias=False: without q's bias, refused by its name rather than run without it.
  d = srformer_shapes(c);
  d.erase("layers.0.residual_group.blocks.0.attn.q.bias");
  ft::expect_refused(d, "layers.0.residual_group.blocks.0.attn.q.bias");
  // patch_norm=False: no embedding norm.
  d = srformer_shapes(c);
  d.erase("patch_embed.norm.weight");
  ft::expect_refused(d, "patch_embed.norm.weight");
  // ape: an absolute position embedding ties the network to its training crop.
  d = srformer_shapes(c);
  d["absolute_pos_embed"] = at::zeros({1, 400, c.embed});
  ft::expect_refused(d, "test.pth: SRFormer layout: an absolute position embedding (absolute_pos_embed, ape) is not supported");
  // Groups of unequal depth.
  d = srformer_shapes(c);
  for (auto it = d.begin(); it != d.end();)
    it = it->first.rfind("layers.1.residual_group.blocks.1.", 0) == 0 ? d.erase(it) : std::next(it);
  ft::expect_refused(d, "test.pth: SRFormer layout: layer 1 has 1 blocks and 2 heads where layer 0 has 2 and 2");
  // An index that is not a window's ws^2 x (ws/2)^2.
  d = srformer_shapes(c);
  d["layers.0.residual_group.blocks.0.attn.aligned_relative_position_index"] = at::zeros({100, 100}, at::kLong);
  ft::expect_refused(d, "test.pth: SRFormer layout: aligned_relative_position_index is 100 x 100");
  // Channels that do not split into the key/value quarters.
  Config odd = c;
  odd.embed = 18;
  odd.heads = 3;
  ft::expect_refused(srformer_shapes(odd), "test.pth: SRFormer layout: 18 channels do not split into four key/value quarters");
}

}  // namespace
