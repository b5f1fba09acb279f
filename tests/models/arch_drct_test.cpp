// DRCT against the upstream implementation (spandrel's DRCT code on Debian's python3-torch, run by
// tests/data/arch/make_references.py with seeded weights in the upstream layout, on real-frame
// crops of odd sizes reflect-padded to the window as DRCT's test code pads them): the committed
// small checkpoints (two shifted dense groups at x2; one group without stored shift masks, hence
// unshifted, at x3 with MLP ratio 1.5 and no conv_after_body) are detected from their keys and
// shapes and give the upstream output within 80 dB in fp32. Every published configuration is
// detected from a state dict of its shapes; tiles on the window grid stay within 50 dB of whole
// frames and bf16 within 40 dB of fp32; wrong and missing tensors and the unsupported variants
// are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <iostream>

#include "infer/threads.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "models/swin_shapes.h"
#include "models/swin_windows.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;

namespace {

struct Config {
  int64_t in = 3, embed = 180, layers = 6, heads = 6, window = 16, hidden = 360, growth = 32, feat = 64, scale = 4;
  int64_t img_size = 64;  // the training crop: a crop of one window stores no shift masks
  bool after_body = true;
};

// Dense layer k's width and upstream's head count and MLP width for it (drct_arch.py's RDG).
int64_t width(const Config& c, int k) { return c.embed + k * c.growth; }
int64_t heads(const Config& c, int k) { return c.heads - width(c, k) % c.heads; }
int64_t hidden(const Config& c, int k) { return k >= 3 ? width(c, k) : width(c, k) * c.hidden / c.embed; }

// Zeros in DRCT's upstream layout: what detection reads is keys and shapes only.
StateDict drct_shapes(const Config& c) {
  StateDict d;
  const int64_t n = c.window * c.window, span = 2 * c.window - 1, windows = (c.img_size / c.window) * (c.img_size / c.window);
  ft::zero_conv(d, "conv_first", c.in, c.embed, 3);
  ft::zero_norm(d, "patch_embed.norm", c.embed);
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string g = "layers." + std::to_string(i);
    for (int k = 0; k < 5; ++k) {
      const std::string b = g + ".swin" + std::to_string(k + 1);
      const int64_t w = width(c, k);
      ft::zero_norm(d, b + ".norm1", w);
      d[b + ".attn.relative_position_bias_table"] = at::zeros({span * span, heads(c, k)});
      d[b + ".attn.relative_position_index"] = at::zeros({n, n}, at::kLong);
      ft::zero_linear(d, b + ".attn.qkv", w, 3 * w);
      ft::zero_linear(d, b + ".attn.proj", w, w);
      ft::zero_norm(d, b + ".norm2", w);
      ft::zero_linear(d, b + ".mlp.fc1", w, hidden(c, k));
      ft::zero_linear(d, b + ".mlp.fc2", hidden(c, k), w);
      if (k % 2 == 1 && c.img_size > c.window) d[b + ".attn_mask"] = at::zeros({windows, n, n});
      ft::zero_conv(d, g + ".adjust" + std::to_string(k + 1), w, k < 4 ? c.growth : c.embed, 1);
    }
  }
  ft::zero_norm(d, "norm", c.embed);
  if (c.after_body) ft::zero_conv(d, "conv_after_body", c.embed, c.embed, 3);
  ft::zero_conv(d, "conv_before_upsample.0", c.embed, c.feat, 3);
  if (c.scale == 3) ft::zero_conv(d, "upsample.0", c.feat, 9 * c.feat, 3);
  for (int64_t s = 1, i = 0; c.scale != 3 && s < c.scale; s *= 2, i += 2) ft::zero_conv(d, "upsample." + std::to_string(i), c.feat, 4 * c.feat, 3);
  ft::zero_conv(d, "conv_last", c.feat, c.in, 3);
  return d;
}

void expect_detected_as(const fm::DetectedArch& d, const Config& c) {
  EXPECT_EQ(d.arch, "drct");
  EXPECT_EQ(d.scale, c.scale);
  EXPECT_EQ(d.in_channels, c.in);
  EXPECT_EQ(d.out_channels, c.in);
  EXPECT_EQ(d.params.get("embed_dim", 0), double(c.embed));
  EXPECT_EQ(d.params.get("layers", 0), double(c.layers));
  EXPECT_EQ(d.params.get("heads", 0), double(c.heads));
  EXPECT_EQ(d.params.get("window_size", 0), double(c.window));
  EXPECT_EQ(d.params.get("mlp_hidden", 0), double(c.hidden));
  EXPECT_EQ(d.params.get("growth", 0), double(c.growth));
  EXPECT_EQ(d.params.get("num_feat", 0), double(c.feat));
  EXPECT_EQ(d.params.get("shifted", -1), c.img_size > c.window ? 1.0 : 0.0);
  EXPECT_EQ(d.params.get("conv_after_body", -1), c.after_body ? 1.0 : 0.0);
  EXPECT_EQ(d.params.get("patch_norm", -1), 1.0);
}

struct Ref {
  const char* name;
  Config config;
};

std::vector<Ref> references() {  // make_references.py's drct_configs
  return {{"drct-w8-x2", {.embed = 16, .layers = 2, .heads = 4, .window = 8, .hidden = 32, .growth = 6, .feat = 16, .scale = 2, .img_size = 16}},
          {"drct-w8-x3-noshift",
           {.embed = 20, .layers = 1, .heads = 4, .window = 8, .hidden = 30, .growth = 6, .feat = 16, .scale = 3, .img_size = 8, .after_body = false}}};
}

TEST(ArchDrct, MatchesTheUpstreamImplementationOnTheCommittedReferences) {
  framelift::infer::configure_cpu_threads(0);
  for (const Ref& ref : references()) {
    SCOPED_TRACE(ref.name);
    const ft::ReferenceRun run = ft::run_reference(ref.name);
    ASSERT_TRUE(run.detected);
    expect_detected_as(*run.detected, ref.config);
    EXPECT_EQ(run.info.size_multiple, ref.config.window);  // the runner reflect-pads to the window
    std::cout << ref.name << ": fp32 vs upstream " << run.db << " dB\n";
    EXPECT_GE(run.db, 80.0);
  }
}

TEST(ArchDrct, IndexTablesAndShiftMasksAreUpstreams) {
  // The committed checkpoint stores upstream's own tables: framelift's recomputed index equals
  // them, and its shift mask for the 16 px training crop equals the stored one.
  const StateDict dict = framelift::weights::load_weights(ft::arch_reference_dir() / "drct-w8-x2.pth");
  for (const char* b : {"layers.0.swin1", "layers.1.swin4"})
    EXPECT_TRUE(fm::relative_position_index(8).equal(dict.at(std::string(b) + ".attn.relative_position_index"))) << b;
  EXPECT_TRUE(fm::shifted_window_mask(16, 16, 8, 4).equal(dict.at("layers.0.swin2.attn_mask")));
  EXPECT_TRUE(fm::shifted_window_mask(16, 16, 8, 4).equal(dict.at("layers.1.swin4.attn_mask")));
  // The dense layers' head counts follow upstream's rule (16 + k 6 channels, 4 heads: 4, 2, 4, 2, 4).
  const int64_t expected[] = {4, 2, 4, 2, 4};
  for (int k = 0; k < 5; ++k)
    EXPECT_EQ(dict.at("layers.0.swin" + std::to_string(k + 1) + ".attn.relative_position_bias_table").size(1), expected[k]) << k;
}

TEST(ArchDrct, EveryPublishedConfigurationIsDetected) {
  // ming053l/DRCT's options: DRCT (embed 180, 6 dense groups, 6 heads, window 16, growth 32, MLP
  // ratio 2, 64 px training crop) and DRCT-L (12 groups), x2/x3/x4; Real-DRCT-GAN is DRCT-L x4;
  // traiNNer-redux adds DRCT-XL (14 groups) and 1x models (a pixel-shuffle tail without upsample
  // convolutions, which spandrel reads as scale 1).
  std::vector<Config> configs;
  for (int64_t layers : {6, 12, 14})
    for (int64_t s : {1, 2, 3, 4}) configs.push_back({.layers = layers, .scale = s});
  configs.push_back({.in = 1, .scale = 2});  // a grey model: upstream's in_chans
  for (const Config& c : configs) {
    SCOPED_TRACE(testing::Message() << "layers " << c.layers << " in " << c.in << " x" << c.scale);
    const auto d = fm::detect(drct_shapes(c), "test.pth");
    ASSERT_TRUE(d);
    expect_detected_as(*d, c);
  }
  // DRCT (180, 6 heads, growth 32): upstream's dense layers have 6, 4, 2, 6, 4 heads over 180, 212,
  // 244, 276, 308 channels; the full-size state dict builds, which checks every shape against them.
  EXPECT_NO_THROW(fm::build_model(drct_shapes({.layers = 1, .scale = 2}), "test.pth"));
}

TEST(ArchDrct, TiledMatchesWholeAndBf16MatchesFp32OnARealFrame) {
  framelift::infer::configure_cpu_threads(0);
  auto model = fm::load_model(ft::arch_reference_dir() / "drct-w8-x2.pth");
  EXPECT_EQ(model->info().tile_overlap, 32);
  const ft::TiledAndBf16 r = ft::tiled_and_bf16(*model, ft::real_frame(101, 75).squeeze(0), 40);
  std::cout << "drct-w8-x2: tiled (40 px, 32 px context) vs whole " << r.tiled_db << " dB, without context " << r.seams_db
            << " dB; bf16 vs fp32 " << r.bf16_db << " dB\n";
  EXPECT_GE(r.tiled_db, 50.0);
  EXPECT_LT(r.seams_db, 50.0) << "tiles without context should show seams: the check above would catch a wrong overlap";
  EXPECT_GE(r.bf16_db, 40.0);
}

TEST(ArchDrct, WrongAndMissingTensorsAndUnsupportedVariantsAreRefusedByName) {
  const Config c{.embed = 16, .layers = 1, .heads = 4, .window = 8, .hidden = 32, .growth = 6, .feat = 16, .scale = 2, .img_size = 16};
  StateDict d = drct_shapes(c);
  d["layers.0.swin3.mlp.fc2.weight"] = at::zeros({28, 55});
  EXPECT_EQ(ft::refusal_of(d), "test.pth: tensor layers.0.swin3.mlp.fc2.weight has shape [28, 55], expected [28, 56]");
  d = drct_shapes(c);
  d.erase("layers.0.adjust4.bias");
  ft::expect_refused(d, "layers.0.adjust4.bias");
  // A bias table with the wrong head count for a dense layer (upstream's rule gives swin2 2 heads).
  d = drct_shapes(c);
  d["layers.0.swin2.attn.relative_position_bias_table"] = at::zeros({225, 4});
  ft::expect_refused(d, "layers.0.swin2.attn.relative_position_bias_table");
  // A tensor no DRCT has: the file is a variant framelift would run without some of its weights.
  d = drct_shapes(c);
  d["layers.0.swin1.conv_block.cab.0.weight"] = at::zeros({5, 16, 3, 3});
  ft::expect_refused(d, "layers.0.swin1.conv_block.cab.0.weight");
  // Upstream's variants no published model uses: no reconstruction (upstream then returns its
  // input) and an absolute position embedding fixed to the training size.
  d = drct_shapes(c);
  for (const char* k : {"conv_last.weight", "conv_last.bias", "conv_before_upsample.0.weight", "conv_before_upsample.0.bias",
                        "upsample.0.weight", "upsample.0.bias"})
    d.erase(k);
  ft::expect_refused(d, "DRCT layout: no conv_last");
  d = drct_shapes(c);
  d["absolute_pos_embed"] = at::zeros({1, 256, 16});
  ft::expect_refused(d, "DRCT layout: absolute_pos_embed");
  // qkv_bias=False (upstream's option, no published model): the missing bias is named.
  d = drct_shapes(c);
  d.erase("layers.0.swin1.attn.qkv.bias");
  ft::expect_refused(d, "layers.0.swin1.attn.qkv.bias");
  // Groups with other head counts than the first.
  d = drct_shapes({.embed = 16, .layers = 2, .heads = 4, .window = 8, .hidden = 32, .growth = 6, .feat = 16, .scale = 2});
  d["layers.1.swin1.attn.relative_position_bias_table"] = at::zeros({225, 2});
  ft::expect_refused(d, "layer 1 has 2 heads where layer 0 has 4");
}

}  // namespace
