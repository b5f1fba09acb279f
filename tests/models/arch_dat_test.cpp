// DAT against the upstream implementation (spandrel's DAT code on Debian's python3-torch, run by
// tests/data/arch/make_references.py with seeded weights and batch statistics in the upstream
// layout; einops, which Debian lacks, replaced there by a rearrange of its patterns): the
// committed small checkpoints (DAT-light's layout at x2 with 3conv and pixelshuffledirect, and
// DAT-S's at x3 with two groups, 1conv and pixelshuffle) are detected from their keys and shapes
// and, on real-frame crops of odd sizes that the network zero-pads itself, give the upstream output
// within 80 dB in fp32. Every published configuration is detected from a state dict of its shapes;
// tiles on the split grid stay within 50 dB of whole frames and bf16 within 40 dB of fp32; wrong
// and missing tensors are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <iostream>

#include "infer/threads.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "models/swin_windows.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;

namespace {

struct Config {
  int64_t embed = 180, layers = 6, depth = 6, heads = 6, split_h = 8, split_w = 32, hidden = 720, feat = 64, scale = 4;
  bool three_conv = false, direct = false;
};

// Zeros in DAT's upstream layout (the split sizes' offset tables excepted: detection reads their
// last row): what detection reads is keys, shapes and that row.
class DatShapes {
 public:
  explicit DatShapes(const Config& c) : c_(c) {}

  StateDict build() {
    conv("conv_first", 3, c_.embed, 3);
    vec("before_RG.1", c_.embed);
    for (int64_t i = 0; i < c_.layers; ++i) {
      for (int64_t j = 0; j < c_.depth; ++j) block(i, j);
      residual_conv("layers." + std::to_string(i) + ".conv");
    }
    vec("norm", c_.embed);
    residual_conv("conv_after_body");
    if (c_.direct) {
      conv("upsample.0", c_.embed, 3 * c_.scale * c_.scale, 3);
    } else {
      conv("conv_before_upsample.0", c_.embed, c_.feat, 3);
      if (c_.scale == 3) conv("upsample.0", c_.feat, 9 * c_.feat, 3);
      for (int64_t s = 1, i = 0; c_.scale != 3 && s < c_.scale; s *= 2, i += 2) conv("upsample." + std::to_string(i), c_.feat, 4 * c_.feat, 3);
      conv("conv_last", c_.feat, 3, 3);
    }
    return d_;
  }

 private:
  void conv(const std::string& p, int64_t i, int64_t o, int64_t k) {
    d_[p + ".weight"] = at::zeros({o, i, k, k});
    d_[p + ".bias"] = at::zeros({o});
  }
  void vec(const std::string& p, int64_t n) {
    d_[p + ".weight"] = at::zeros({n});
    d_[p + ".bias"] = at::zeros({n});
  }
  void linear(const std::string& p, int64_t i, int64_t o) {
    d_[p + ".weight"] = at::zeros({o, i});
    d_[p + ".bias"] = at::zeros({o});
  }
  void batch_norm(const std::string& p, int64_t n) {
    vec(p, n);
    d_[p + ".running_mean"] = at::zeros({n});
    d_[p + ".running_var"] = at::ones({n});
    d_[p + ".num_batches_tracked"] = at::zeros({}, at::kLong);
  }
  void residual_conv(const std::string& p) {
    if (!c_.three_conv) return conv(p, c_.embed, c_.embed, 3);
    conv(p + ".0", c_.embed, c_.embed / 4, 3);
    conv(p + ".2", c_.embed / 4, c_.embed / 4, 1);
    conv(p + ".4", c_.embed / 4, c_.embed, 3);
  }
  void interaction(const std::string& a) {
    const int64_t e = c_.embed;
    d_[a + ".dwconv.0.weight"] = at::zeros({e, 1, 3, 3});
    d_[a + ".dwconv.0.bias"] = at::zeros({e});
    batch_norm(a + ".dwconv.1", e);
    conv(a + ".channel_interaction.1", e, e / 8, 1);
    batch_norm(a + ".channel_interaction.2", e / 8);
    conv(a + ".channel_interaction.4", e / 8, e, 1);
    conv(a + ".spatial_interaction.0", e, e / 16, 1);
    batch_norm(a + ".spatial_interaction.1", e / 16);
    conv(a + ".spatial_interaction.3", e / 16, 1, 1);
  }
  void split_branch(const std::string& a, int64_t wh, int64_t ww) {
    const int64_t n = wh * ww, pos = c_.embed / 2 / 4 / 4;
    d_[a + ".rpe_biases"] = fm::relative_offsets(wh, ww);
    d_[a + ".relative_position_index"] = at::zeros({n, n}, at::kLong);
    linear(a + ".pos.pos_proj", 2, pos);
    for (int k = 1; k <= 3; ++k) {
      vec(a + ".pos.pos" + std::to_string(k) + ".0", pos);
      linear(a + ".pos.pos" + std::to_string(k) + ".2", pos, k == 3 ? c_.heads / 2 : pos);
    }
  }
  void block(int64_t i, int64_t j) {
    const std::string b = "layers." + std::to_string(i) + ".blocks." + std::to_string(j), a = b + ".attn";
    vec(b + ".norm1", c_.embed);
    linear(a + ".qkv", c_.embed, 3 * c_.embed);
    linear(a + ".proj", c_.embed, c_.embed);
    if (j % 2) {
      d_[a + ".temperature"] = at::zeros({c_.heads, 1, 1});
    } else {
      split_branch(a + ".attns.0", c_.split_h, c_.split_w);
      split_branch(a + ".attns.1", c_.split_w, c_.split_h);
      const bool shifted = i % 2 == 0 ? j > 0 && (j - 2) % 4 == 0 : j % 4 == 0;
      const int64_t n = c_.split_h * c_.split_w, windows = (64 / c_.split_h) * (64 / c_.split_w);  // the 64 px training crop's
      if (shifted)
        for (const char* m : {".attn_mask_0", ".attn_mask_1"}) d_[a + m] = at::zeros({windows, n, n});
    }
    interaction(a);
    vec(b + ".norm2", c_.embed);
    linear(b + ".ffn.fc1", c_.embed, c_.hidden);
    vec(b + ".ffn.sg.norm", c_.hidden / 2);
    d_[b + ".ffn.sg.conv.weight"] = at::zeros({c_.hidden / 2, 1, 3, 3});
    d_[b + ".ffn.sg.conv.bias"] = at::zeros({c_.hidden / 2});
    linear(b + ".ffn.fc2", c_.hidden / 2, c_.embed);
  }

  Config c_;
  StateDict d_;
};

StateDict dat_shapes(const Config& c) { return DatShapes(c).build(); }

void expect_detected_as(const fm::DetectedArch& d, const Config& c) {
  EXPECT_EQ(d.arch, "dat");
  EXPECT_EQ(d.scale, c.scale);
  EXPECT_EQ(d.params.get("embed_dim", 0), double(c.embed));
  EXPECT_EQ(d.params.get("layers", 0), double(c.layers));
  EXPECT_EQ(d.params.get("depth", 0), double(c.depth));
  EXPECT_EQ(d.params.get("heads", 0), double(c.heads));
  EXPECT_EQ(d.params.get("split_height", 0), double(c.split_h));
  EXPECT_EQ(d.params.get("split_width", 0), double(c.split_w));
  EXPECT_EQ(d.params.get("ffn_hidden", 0), double(c.hidden));
  EXPECT_EQ(d.params.get("upsampler", 0), c.direct ? 2.0 : 1.0);
  if (!c.direct) {
    EXPECT_EQ(d.params.get("num_feat", 0), double(c.feat));
  }
  EXPECT_EQ(d.params.get("three_conv", -1), c.three_conv ? 1.0 : 0.0);
}

struct Ref {
  const char* name;
  Config config;
};

std::vector<Ref> references() {  // make_references.py's dat_configs
  return {{"dat-light-x2",
           {.embed = 64, .layers = 1, .depth = 3, .heads = 4, .split_h = 4, .split_w = 16, .hidden = 128, .scale = 2, .three_conv = true, .direct = true}},
          {"dat-s-x3", {.embed = 48, .layers = 2, .depth = 2, .heads = 4, .split_h = 4, .split_w = 8, .hidden = 72, .feat = 16, .scale = 3}}};
}

TEST(ArchDat, MatchesTheUpstreamImplementationOnTheCommittedReferences) {
  framelift::infer::configure_cpu_threads(0);
  for (const Ref& ref : references()) {
    SCOPED_TRACE(ref.name);
    const ft::ReferenceRun run = ft::run_reference(ref.name);
    ASSERT_TRUE(run.detected);
    expect_detected_as(*run.detected, ref.config);
    // The network pads itself; tiles keep to the larger split's grid.
    EXPECT_EQ(run.info.size_multiple, 1);
    EXPECT_EQ(run.info.tile_grid, ref.config.split_w);
    std::cout << ref.name << ": fp32 vs upstream " << run.db << " dB\n";
    EXPECT_GE(run.db, 80.0);
  }
}

TEST(ArchDat, OffsetAndIndexTablesAreUpstreams) {
  // The committed checkpoint stores upstream's own tables for both branches (4 x 16 and 16 x 4):
  // framelift's recomputed ones equal them.
  const StateDict dict = framelift::weights::load_weights(ft::arch_reference_dir() / "dat-light-x2.pth");
  const std::string a = "layers.0.blocks.0.attn.attns.";
  EXPECT_TRUE(fm::relative_offsets(4, 16).equal(dict.at(a + "0.rpe_biases")));
  EXPECT_TRUE(fm::relative_offsets(16, 4).equal(dict.at(a + "1.rpe_biases")));
  EXPECT_TRUE(fm::relative_position_index(4, 16).equal(dict.at(a + "0.relative_position_index")));
  EXPECT_TRUE(fm::relative_position_index(16, 4).equal(dict.at(a + "1.relative_position_index")));
  // The stored shift masks are for the 16 x 16 training crop; framelift's for that size equal them.
  const std::string m = "layers.0.blocks.2.attn.attn_mask_";
  EXPECT_TRUE(fm::shifted_window_mask(16, 16, 4, 16, 2, 8).equal(dict.at(m + "0")));
  EXPECT_TRUE(fm::shifted_window_mask(16, 16, 16, 4, 8, 2).equal(dict.at(m + "1")));
}

TEST(ArchDat, EveryPublishedConfigurationIsDetected) {
  // zhengchen1999/DAT's options: DAT-light (embed 60, one group of 18 blocks, split 8x32,
  // expansion 2, 3conv, pixelshuffledirect) x2/x3/x4; DAT-S (6 groups of 6, split 8x16,
  // expansion 2), DAT-2 (split 8x32, expansion 2) and DAT (split 8x32, expansion 4), x2/x3/x4.
  std::vector<Config> configs;
  for (int64_t s : {2, 3, 4})
    configs.push_back({.embed = 60, .layers = 1, .depth = 18, .heads = 6, .hidden = 120, .scale = s, .three_conv = true, .direct = true});
  configs.push_back({.split_w = 16, .hidden = 360});
  configs.push_back({.split_w = 16, .hidden = 360, .scale = 3});
  configs.push_back({.hidden = 360});
  configs.push_back({.hidden = 360, .scale = 2});
  configs.push_back({});
  configs.push_back({.scale = 3});
  for (const Config& c : configs) {
    SCOPED_TRACE(testing::Message() << "embed " << c.embed << " split " << c.split_h << "x" << c.split_w << " hidden " << c.hidden << " x" << c.scale);
    const auto d = fm::detect(dat_shapes(c), "test.pth");
    ASSERT_TRUE(d);
    expect_detected_as(*d, c);
  }
}

TEST(ArchDat, TiledMatchesWholeAndBf16MatchesFp32OnARealFrame) {
  framelift::infer::configure_cpu_threads(0);
  auto model = fm::load_model(ft::arch_reference_dir() / "dat-s-x3.pth");
  EXPECT_EQ(model->info().tile_overlap, 32);
  const ft::TiledAndBf16 r = ft::tiled_and_bf16(*model, ft::real_frame(101, 75).squeeze(0), 40);
  std::cout << "dat-s-x3: tiled (40 px, 32 px context) vs whole " << r.tiled_db << " dB, without context " << r.seams_db
            << " dB; bf16 vs fp32 " << r.bf16_db << " dB\n";
  EXPECT_GE(r.tiled_db, 50.0);
  EXPECT_LT(r.seams_db, 50.0) << "tiles without context should show seams: the check above would catch a wrong overlap";
  EXPECT_GE(r.bf16_db, 40.0);
}

TEST(ArchDat, WrongAndMissingTensorsAreRefusedByName) {
  const Config c{.embed = 32, .layers = 1, .depth = 2, .heads = 2, .split_h = 4, .split_w = 8, .hidden = 64, .feat = 16, .scale = 2};
  StateDict d = dat_shapes(c);
  d["layers.0.blocks.1.ffn.fc2.weight"] = at::zeros({32, 31});
  EXPECT_EQ(ft::refusal_of(d), "test.pth: tensor layers.0.blocks.1.ffn.fc2.weight has shape [32, 31], expected [32, 32]");
  d = dat_shapes(c);
  d.erase("layers.0.blocks.0.attn.spatial_interaction.1.running_var");
  ft::expect_refused(d, "layers.0.blocks.0.attn.spatial_interaction.1.running_var");
  // An offset table that does not fit its window is refused by detection, naming the split.
  d = dat_shapes(c);
  d["layers.0.blocks.0.attn.attns.0.rpe_biases"] = fm::relative_offsets(4, 4);
  try {
    fm::detect(d, "test.pth");
    ADD_FAILURE() << "detected";
  } catch (const framelift::Error& e) {
    EXPECT_NE(std::string(e.what()).find("split 4x4"), std::string::npos) << e.what();
  }
}

}  // namespace
