// The per-architecture cost walk against hand counts from the networks' code and ncnn graphs.
#include <gtest/gtest.h>

#include "plan/arch_cost.h"
#include "util/error.h"

using namespace framelift::plan;

TEST(ArchCost, CompactX4CountsEveryConvolution) {
  // realesr-animevideov3: conv 3->64, 16 convs 64->64, conv 64->48, all 3x3 at input size.
  const ArchCost c = arch_cost("srvgg_compact", 4);
  EXPECT_DOUBLE_EQ(c.macs_per_px, 3 * 64 * 9 + 16 * 64 * 64 * 9 + 64 * 48 * 9);
  EXPECT_EQ(c.tile_overlap, 8);
  // Input kept for the residual, the previous y, the conv's output and the PReLU copy.
  EXPECT_GE(c.peak_elems_per_px, 3 + 3 * 64);
  EXPECT_TRUE(c.tiled);
}

TEST(ArchCost, CompactNumConvScalesTheBody) {
  const ArchCost a = arch_cost("srvgg_compact", 4, {{"num_conv", 32}});
  const ArchCost b = arch_cost("srvgg_compact", 4);
  EXPECT_DOUBLE_EQ(a.macs_per_px - b.macs_per_px, 16 * 64 * 64 * 9);
}

TEST(ArchCost, RrdbX4PlusMatchesTheHandCount) {
  const double dense = (64 + 96 + 128 + 160) * 32 * 9 + 192 * 64 * 9;
  const double body = 23 * 3 * dense;
  const double tail = 64 * 64 * 9 * (1 + 4 + 16 + 16) + 64 * 3 * 9 * 16;  // conv_body, ups, hr, last
  const ArchCost c = arch_cost("rrdbnet", 4);
  EXPECT_DOUBLE_EQ(c.macs_per_px, 3 * 64 * 9 + body + tail);
  // Real-ESRGAN x4plus has 16.7 M parameters.
  EXPECT_NEAR(c.params, 16.70e6, 0.02e6);
  // The x4 tail (two 64-channel tensors at 16x the input area) is the peak, not the trunk.
  EXPECT_GE(c.peak_elems_per_px, 2 * 64 * 16);
}

TEST(ArchCost, RrdbBlocksFromParams) {
  EXPECT_LT(arch_cost("rrdbnet", 4, {{"nb", 6}}).macs_per_px, arch_cost("rrdbnet", 4).macs_per_px / 3);
}

TEST(ArchCost, UpConv7MatchesTheNcnnGraphWeights) {
  // waifu2x models-upconv_7_anime_style_art_rgb/scale2.0x_model.param, weight_data_size fields.
  const double weights = 432 + 4608 + 18432 + 73728 + 147456 + 294912 + 12288;
  const double biases = 16 + 32 + 64 + 128 + 128 + 256 + 3;
  EXPECT_DOUBLE_EQ(arch_cost("waifu2x_upconv7", 2).params, weights + biases);
}

TEST(ArchCost, CunetTwoXMatchesTheNcnnGraphConvolutions) {
  // waifu2x models-cunet/scale2.0x_model.param: the Convolution and Deconvolution weights (the SE
  // blocks' InnerProducts, about 1%, are not counted by the walk).
  const double weights = 864 + 18432 + 16384 + 73728 + 73728 + 16384 + 36864 + 3072 + 864 + 18432 + 16384 + 36864 +
                         73728 + 65536 + 294912 + 294912 + 65536 + 73728 + 36864 + 16384 + 36864 + 1728;
  const ArchCost c = arch_cost("waifu2x_cunet", 2);
  EXPECT_NEAR(c.params, weights, weights * 0.01);
  EXPECT_EQ(arch_cost("realcugan", 2).macs_per_px, c.macs_per_px);  // the same two U-Nets
}

TEST(ArchCost, RealCuganThreeXIsTheDearest) {
  // 3x runs UNet2 at 9x the input area on 3 channels; 4x runs it at 4x the area on 64 channels
  // and finishes with a pixel shuffle, which is cheaper.
  EXPECT_LT(arch_cost("realcugan", 2).macs_per_px, arch_cost("realcugan", 4).macs_per_px);
  EXPECT_LT(arch_cost("realcugan", 4).macs_per_px, arch_cost("realcugan", 3).macs_per_px);
}

TEST(ArchCost, RifeIsWholeFrameAndLight) {
  const ArchCost c = arch_cost("rife", 1);
  EXPECT_FALSE(c.tiled);
  EXPECT_EQ(c.size_multiple, 32);
  // Block 3 alone (full-size pass, width 64): 8 residual convs at 1/16 area.
  EXPECT_GT(c.macs_per_px, 8 * 64 * 64 * 9 / 16.0);
  EXPECT_LT(c.macs_per_px, 60e3);
}

TEST(ArchCost, UnknownArchitectureIsAUsageError) {
  try {
    arch_cost("swinir", 4);
    FAIL();
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("swinir"), std::string::npos);
  }
  EXPECT_THROW(arch_cost("realcugan", 5), framelift::Error);
}

TEST(NetWalk, PeakCountsKeptTensorsAndBothEndsOfALayer) {
  NetWalk w(3);
  w.keep();          // 3
  w.conv(64, 3);     // 3 kept + 3 in + 64 out
  EXPECT_DOUBLE_EQ(w.peak(), 70);
  w.resize(2);       // 64 in + 256 out + 3 kept
  EXPECT_DOUBLE_EQ(w.peak(), 323);
  EXPECT_DOUBLE_EQ(w.macs(), 3 * 64 * 9);
  w.conv(8, 1, 2);   // stride 2 back to the input area
  EXPECT_DOUBLE_EQ(w.area(), 1);
}
