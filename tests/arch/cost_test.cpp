// The per-architecture cost walk against hand counts from the networks' code and ncnn graphs.
#include <gtest/gtest.h>

#include "arch/declaration.h"
#include <nlohmann/json.hpp>

#include "util/error.h"

using namespace framelift::arch;

TEST(ArchCost, CompactX4CountsEveryConvolution) {
  // realesr-animevideov3: conv 3->64, 16 convs 64->64, conv 64->48, all 3x3 at input size.
  const ArchCost c = cost("srvgg_compact", 4);
  EXPECT_DOUBLE_EQ(c.macs_per_px, 3 * 64 * 9 + 16 * 64 * 64 * 9 + 64 * 48 * 9);
  EXPECT_EQ(c.tile_overlap, 8);
  // Input kept for the residual, the previous y, the conv's output and the PReLU copy.
  EXPECT_GE(c.peak_elems_per_px, 3 + 3 * 64);
  EXPECT_TRUE(c.tiled);
}

TEST(ArchCost, CompactNumConvScalesTheBody) {
  const ArchCost a = cost("srvgg_compact", 4, {{"num_conv", 32}});
  const ArchCost b = cost("srvgg_compact", 4);
  EXPECT_DOUBLE_EQ(a.macs_per_px - b.macs_per_px, 16 * 64 * 64 * 9);
}

TEST(ArchCost, RrdbX4PlusMatchesTheHandCount) {
  const double dense = (64 + 96 + 128 + 160) * 32 * 9 + 192 * 64 * 9;
  const double body = 23 * 3 * dense;
  const double tail = 64 * 64 * 9 * (1 + 4 + 16 + 16) + 64 * 3 * 9 * 16;  // conv_body, ups, hr, last
  const ArchCost c = cost("rrdbnet", 4);
  EXPECT_DOUBLE_EQ(c.macs_per_px, 3 * 64 * 9 + body + tail);
  // Real-ESRGAN x4plus has 16.7 M parameters.
  EXPECT_NEAR(c.params, 16.70e6, 0.02e6);
  // The x4 tail (two 64-channel tensors at 16x the input area) is the peak, not the trunk.
  EXPECT_GE(c.peak_elems_per_px, 2 * 64 * 16);
}

TEST(ArchCost, RrdbBlocksFromParams) {
  EXPECT_LT(cost("rrdbnet", 4, {{"nb", 6}}).macs_per_px, cost("rrdbnet", 4).macs_per_px / 3);
}

TEST(ArchCost, UpConv7MatchesTheNcnnGraphWeights) {
  // waifu2x models-upconv_7_anime_style_art_rgb/scale2.0x_model.param, weight_data_size fields.
  const double weights = 432 + 4608 + 18432 + 73728 + 147456 + 294912 + 12288;
  const double biases = 16 + 32 + 64 + 128 + 128 + 256 + 3;
  EXPECT_DOUBLE_EQ(cost("waifu2x_upconv7", 2).params, weights + biases);
}

TEST(ArchCost, CunetTwoXMatchesTheNcnnGraphConvolutions) {
  // waifu2x models-cunet/scale2.0x_model.param: the Convolution and Deconvolution weights (the SE
  // blocks' InnerProducts, about 1%, are not counted by the walk).
  const double weights = 864 + 18432 + 16384 + 73728 + 73728 + 16384 + 36864 + 3072 + 864 + 18432 + 16384 + 36864 +
                         73728 + 65536 + 294912 + 294912 + 65536 + 73728 + 36864 + 16384 + 36864 + 1728;
  const ArchCost c = cost("waifu2x_cunet", 2);
  EXPECT_NEAR(c.params, weights, weights * 0.01);
  EXPECT_EQ(cost("realcugan", 2).macs_per_px, c.macs_per_px);  // the same two U-Nets
}

TEST(ArchCost, CunetNoiseOnlyMatchesTheNcnnGraphConvolutions) {
  // waifu2x models-cunet/noise0_model.param: UNet1 ends in a 3x3 conv (1728) where 2x has its
  // deconvolution (3072); the pooled U-Net takes multiples of 4, as the graph does.
  const double weights = 864 + 18432 + 16384 + 73728 + 73728 + 16384 + 36864 + 1728 + 864 + 18432 + 16384 + 36864 +
                         73728 + 65536 + 294912 + 294912 + 65536 + 73728 + 36864 + 16384 + 36864 + 1728;
  const ArchCost c = cost("waifu2x_cunet", 1);
  EXPECT_NEAR(c.params, weights, weights * 0.01);
  EXPECT_EQ(c.size_multiple, 4);
  EXPECT_EQ(cost("waifu2x_cunet", 2).size_multiple, 1);
}

TEST(ArchCost, RealCuganThreeXIsTheDearest) {
  // 3x runs UNet2 at 9x the input area on 3 channels; 4x runs it at 4x the area on 64 channels
  // and finishes with a pixel shuffle, which is cheaper.
  EXPECT_LT(cost("realcugan", 2).macs_per_px, cost("realcugan", 4).macs_per_px);
  EXPECT_LT(cost("realcugan", 4).macs_per_px, cost("realcugan", 3).macs_per_px);
}

TEST(ArchCost, RifeIsWholeFrameAndLight) {
  const ArchCost c = cost("rife", 1);
  EXPECT_FALSE(c.tiled);
  EXPECT_EQ(c.size_multiple, 32);
  // Block 3 alone (full-size pass, width 64): 8 residual convs at 1/16 area.
  EXPECT_GT(c.macs_per_px, 8 * 64 * 64 * 9 / 16.0);
  EXPECT_LT(c.macs_per_px, 60e3);
}

TEST(ArchCost, UnknownArchitectureIsAUsageError) {
  try {
    cost("no_such_arch", 4);
    FAIL();
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("no_such_arch"), std::string::npos);
  }
  EXPECT_THROW(cost("realcugan", 5), framelift::Error);
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

TEST(ArchCost, OmniSrMatchesTheHandCount) {
  // src/models/omnisr.cpp per OSA block on C features with L = window^2 tokens: MBConv two 1x1
  // and a depthwise 3x3 (2C^2 + 9C); two window attentions, qkv + out linears and q.k, attn.v
  // (4C^2 + 2LC each); two channel attentions, qkv 1x1, depthwise 3x3 on 3C, out 1x1 and two
  // (C/4)^2 products per head (4.5C^2 + 27C each); four gated feed-forwards, 1x1 to 2C,
  // depthwise on 2C, 1x1 back (3C^2 + 18C each). Per group a closing 1x1 and the ESA on
  // f = 16 channels (1x1 down, stride-2 3x3 at 1/4 area, 3x3 at 1/36 after the pool, conv_f,
  // 1x1 up). Input conv, output conv, upsampler conv at the ends.
  const double c = 64, l = 64, f = 16, s = 4;
  const double block = 31 * c * c + 135 * c + 4 * l * c;
  const double esa = c * f + f * f * 9 / 4 + f * f * 9 / 36 + f * f + f * c;
  const double group = block + c * c + esa;
  const ArchCost k = cost("omnisr", 4, {{"num_feat", 64}, {"res_num", 5}, {"block_num", 1}, {"window_size", 8}});
  EXPECT_NEAR(k.macs_per_px, 3 * c * 9 + 5 * group + c * c * 9 + c * 3 * s * s * 9, 1e-6);
  // Tiles are padded to the window and need wide context (the grid attention spans the tile).
  EXPECT_EQ(k.size_multiple, 8);
  EXPECT_EQ(k.tile_overlap, 48);
  // The attention scores (4 heads x 64 tokens, twice: scores and softmax) outgrow the features.
  EXPECT_GE(k.peak_elems_per_px, 2 * 4 * 64);
  // A larger window costs more attention, not more convolution.
  const ArchCost wide = cost("omnisr", 4, {{"window_size", 16}});
  EXPECT_NEAR(wide.macs_per_px - k.macs_per_px, 5 * 4 * (256 - 64) * c, 1e-6);
  EXPECT_EQ(wide.size_multiple, 16);
}

TEST(ArchCost, SpanMatchesTheHandCount) {
  // src/models/span.cpp runs each Conv3XC as one 3x3 convolution (its branches composed at load):
  // the stem (3 -> f), 6 blocks of three f -> f, the tail f -> f, the 1x1 fusion of 4f, and the
  // upsampler f -> 3 s^2.
  const double f = 48, s = 4;
  const ArchCost k = cost("span", 4, {{"feature_channels", 48}, {"norm", 1}});
  EXPECT_NEAR(k.macs_per_px, 3 * f * 9 + 19 * f * f * 9 + 4 * f * f + f * 3 * s * s * 9, 1e-6);
  EXPECT_EQ(k.size_multiple, 1);
  EXPECT_EQ(k.tile_overlap, 16);
  // Four feature maps are alive at the fusion (stem, first block, last block's c1, tail).
  EXPECT_GE(k.peak_elems_per_px, 4 * f);
  EXPECT_NEAR(cost("span", 2, {{"feature_channels", 52}}).macs_per_px, 3 * 52 * 9 + 19 * 52 * 52 * 9 + 4 * 52 * 52 + 52 * 12 * 9, 1e-6);
}

TEST(ArchCost, SwinirMatchesTheHandCount) {
  // Classical x4 (embed 180, 6 groups of 6 layers, 6 heads, window 8, MLP 360): per layer the qkv,
  // the attention (q k^T and attn v over 64 tokens), the projection and the MLP; per group a 3x3;
  // then the conv after the body, and the reconstruction: 3x3 to 64, two (3x3 to 256, shuffle 2)
  // at 1x and 4x the area, the last 3x3 at 16x.
  const double e = 180, hidden = 360, t = 64;
  const ArchCost k = cost("swinir", 4, {{"embed_dim", e}, {"layers", 6}, {"depth", 6}, {"heads", 6}, {"window_size", 8},
                                        {"mlp_hidden", hidden}, {"upsampler", 1}});
  const double layer = e * 3 * e + 2 * t * e + e * e + 2 * e * hidden;
  EXPECT_NEAR(k.macs_per_px,
              3 * e * 9 + 36 * layer + 6 * e * e * 9 + e * e * 9 + e * 64 * 9 + 64 * 256 * 9 * (1 + 4) + 64 * 3 * 9 * 16, 1e-6);
  EXPECT_EQ(k.size_multiple, 8);
  // The scores of 6 heads over 64 tokens and their softmax outgrow the 180 features.
  EXPECT_GE(k.peak_elems_per_px, 2 * 6 * 64);
  // The JPEG models' window of 7 is their multiple.
  EXPECT_EQ(cost("swinir", 1, {{"window_size", 7}, {"upsampler", 0}}).size_multiple, 7);
}

TEST(ArchCost, Swin2srIsSwinirsCountPlusItsPatchEmbeddings) {
  // Classical x2 (embed 180, 6 groups of 6 layers): SwinIR's count plus a 1x1 patch embedding
  // after conv_first and one after each group's conv; the position-bias MLP runs once at load.
  const double e = 180;
  const ArchParams p{{"embed_dim", e}, {"layers", 6}, {"depth", 6}, {"heads", 6}, {"window_size", 8},
                           {"mlp_hidden", 2 * e}, {"upsampler", 1}};
  const ArchCost v2 = cost("swin2sr", 2, p), v1 = cost("swinir", 2, p);
  EXPECT_NEAR(v2.macs_per_px - v1.macs_per_px, 7 * e * e, 1e-6);
  EXPECT_EQ(v2.arch, "swin2sr");
  EXPECT_EQ(v2.size_multiple, 8);
  EXPECT_EQ(v2.tile_overlap, 32);
  EXPECT_EQ(cost("swin2sr", 1, {{"window_size", 7}, {"upsampler", 0}}).size_multiple, 7);
}

TEST(ArchCost, HatMatchesTheHandCount) {
  // HAT x4 (embed 180, 6 groups of 6 blocks, 6 heads, window 16 and its 24 px overlap, MLP 360,
  // CAB 180 -> 60 -> 180 with a 6-channel gate): per block SwinIR's layer plus the CAB's two 3x3s
  // and the gate's 1x1s; per group an OCAB (the queries against 576 keys) with its MLP, and a 3x3.
  const double e = 180, hidden = 360, t = 256, ot = 576;
  const ArchCost k = cost("hat", 4, {{"embed_dim", e}, {"layers", 6}, {"depth", 6}, {"heads", 6}, {"window_size", 16},
                                     {"overlap_window", 24}, {"mlp_hidden", hidden}, {"cab_channels", 60}, {"squeeze_channels", 6}});
  const double block = e * 3 * e + 2 * t * e + e * e + 2 * e * hidden + e * 60 * 9 + 60 * e * 9 + e * 6 + 6 * e;
  const double ocab = e * 3 * e + 2 * ot * e + e * e + 2 * e * hidden;
  EXPECT_NEAR(k.macs_per_px, 3 * e * 9 + 36 * block + 6 * (ocab + e * e * 9) + e * e * 9 + e * 64 * 9 + 64 * 256 * 9 * (1 + 4) + 64 * 3 * 9 * 16,
              1e-6);
  EXPECT_EQ(k.size_multiple, 16);
  // The OCAB scores (6 heads x 576 keys per query pixel) and their softmax are the peak.
  EXPECT_GE(k.peak_elems_per_px, 2 * 6 * 576);
}

TEST(ArchCost, DatMatchesTheHandCount) {
  // DAT x4 (embed 180, 6 groups of 6 blocks, 6 heads, split 8x32, FFN 720): per spatial block the
  // qkv, both branches' attention over 256 tokens, the projection; per channel block the qkv, 6
  // heads' 30 x 30 channel attention, the projection; each with the interaction's depthwise 3x3 and
  // spatial gate (1x1s to C/16 and to 1; the channel gate runs on one pooled pixel) and the SGFN
  // (fc1, a depthwise 3x3 on half of it, fc2 from that half); per group a 3x3.
  const double e = 180, hidden = 720, t = 256, d = 30;
  const ArchCost k = cost("dat", 4, {{"embed_dim", e}, {"layers", 6}, {"depth", 6}, {"heads", 6}, {"split_height", 8},
                                     {"split_width", 32}, {"ffn_hidden", hidden}, {"upsampler", 1}});
  const double aim = 9 * e + e * e / 16 + e / 16, ffn = e * hidden + 9 * hidden / 2 + hidden / 2 * e;
  const double spatial = 3 * e * e + 2 * t * e + e * e + aim + ffn, channel = 3 * e * e + 2 * 6 * d * d + e * e + aim + ffn;
  const double group = 3 * spatial + 3 * channel + e * e * 9;
  EXPECT_NEAR(k.macs_per_px, 3 * e * 9 + 6 * group + e * e * 9 + e * 64 * 9 + 64 * 256 * 9 * (1 + 4) + 64 * 3 * 9 * 16, 1e-6);
  // The network pads itself; tiles start on the 32 px split grid.
  EXPECT_EQ(k.size_multiple, 1);
  EXPECT_EQ(k.tile_grid, 32);
  EXPECT_EQ(k.tile_alignment(), 32);
  EXPECT_EQ(k.tile_overlap, 32);
  // The scores of 3 heads over 256 tokens and their softmax outgrow the 720 FFN channels.
  EXPECT_GE(k.peak_elems_per_px, 2 * 3 * 256);
  // DAT-light x2 (embed 60, one group of 18, FFN 120): 3conv (3x3 to 15, 1x1, 3x3 back) and one
  // conv to 3 * 2^2 channels before the shuffle.
  const double l = 60, lh = 120, three = l * 15 * 9 + 15 * 15 + 15 * l * 9;
  const double laim = 9 * l + l * l / 16 + l / 16, lffn = l * lh + 9 * lh / 2 + lh / 2 * l;
  const double lspatial = 4 * l * l + 2 * t * l + laim + lffn, lchannel = 4 * l * l + 2 * 6 * 10 * 10 + laim + lffn;
  EXPECT_NEAR(cost("dat", 2, {{"embed_dim", l}, {"layers", 1}, {"depth", 18}, {"heads", 6}, {"ffn_hidden", lh}, {"three_conv", 1},
                              {"upsampler", 2}})
                  .macs_per_px,
              3 * l * 9 + 9 * lspatial + 9 * lchannel + 2 * three + l * 12 * 9, 1e-6);
  // DAT-S's 8x16 split: a 16 px grid.
  EXPECT_EQ(cost("dat", 4, {{"split_width", 16}}).tile_grid, 16);
}

TEST(ArchCost, DrctMatchesTheHandCount) {
  // DRCT x4 (embed 180, 6 dense groups, 6 heads, window 16, growth 32, MLP 360): per group five
  // Swin layers at 180 + 32 k channels (qkv, the attention over 256 tokens, projection, MLP at
  // twice the width for k < 3 and at the width for the last two), each followed by its 1x1 fusion
  // to 32 channels (the last to 180); then SwinIR's tail.
  const double e = 180, gc = 32, t = 256;
  const ArchCost k = cost("drct", 4, {{"embed_dim", e}, {"layers", 6}, {"heads", 6}, {"window_size", 16}, {"mlp_hidden", 2 * e},
                                      {"growth", gc}, {"num_feat", 64}});
  double group = 0;
  for (int j = 0; j < 5; ++j) {
    const double c = e + j * gc, h = j < 3 ? 2 * c : c;
    group += 4 * c * c + 2 * t * c + 2 * c * h + c * (j < 4 ? gc : e);
  }
  EXPECT_NEAR(k.macs_per_px, 3 * e * 9 + 6 * group + e * e * 9 + e * 64 * 9 + 64 * 256 * 9 * (1 + 4) + 64 * 3 * 9 * 16, 1e-6);
  EXPECT_EQ(k.size_multiple, 16);
  EXPECT_EQ(k.tile_overlap, 32);
  // The scores of swin1's 6 heads over 256 tokens and their softmax are the peak.
  EXPECT_GE(k.peak_elems_per_px, 2 * 6 * 256);
  // Without conv_after_body ("identity") one 3x3 fewer.
  EXPECT_NEAR(k.macs_per_px - cost("drct", 4, {{"conv_after_body", 0}}).macs_per_px, e * e * 9, 1e-6);
  // Weights: upstream's DRCT x4 and DRCT-L x4 have 14,139,579 and 27,580,719 parameters (counted on
  // spandrel's module); the walk leaves out the LayerNorms and position tables, about 1%.
  EXPECT_NEAR(k.params / 14139579, 1, 0.02) << k.params;
  EXPECT_NEAR(cost("drct", 4, {{"layers", 12}}).params / 27580719, 1, 0.02);
}

TEST(ArchCost, SrformerMatchesTheHandCount) {
  // SRFormer x4 (embed 180, 6 groups of 6 blocks, 6 heads, window 24, MLP 360): per block q and kv
  // (E + E/2 outputs), 576 queries each meeting 144 stacked keys (q k^T and attn v over E
  // channels), the projection, fc1, the ConvFFN's depthwise 5x5 over the MLP width and fc2; per
  // group a 3x3.
  const double e = 180, hidden = 360, keys = 144;
  const ArchCost k = cost("srformer", 4, {{"embed_dim", e}, {"layers", 6}, {"depth", 6}, {"heads", 6}, {"window_size", 24},
                                          {"mlp_hidden", hidden}, {"upsampler", 1}});
  const double block = 1.5 * e * e + 2 * keys * e + e * e + e * hidden + 25 * hidden + hidden * e;
  EXPECT_NEAR(k.macs_per_px, 3 * e * 9 + 6 * (6 * block + e * e * 9) + e * e * 9 + e * 64 * 9 + 64 * 256 * 9 * (1 + 4) + 64 * 3 * 9 * 16,
              1e-6);
  // Inputs padded to the window; tiles on its grid with 32 px of context.
  EXPECT_EQ(k.size_multiple, 24);
  EXPECT_EQ(k.tile_overlap, 32);
  // The scores of 6 heads over 144 keys and their softmax outgrow the 360 MLP channels.
  EXPECT_GE(k.peak_elems_per_px, 2 * 6 * 144);
  // SRFormer-light x2 (embed 60, 4 groups of 6, window 16: 64 keys): one conv to 3 * 2^2.
  const double l = 60, lh = 120, lkeys = 64;
  const double lblock = 2.5 * l * l + 2 * lkeys * l + 2 * l * lh + 25 * lh;
  EXPECT_NEAR(cost("srformer", 2, {{"embed_dim", l}, {"layers", 4}, {"depth", 6}, {"heads", 6}, {"window_size", 16},
                                   {"mlp_hidden", lh}, {"upsampler", 2}})
                  .macs_per_px,
              3 * l * 9 + 4 * (6 * lblock + l * l * 9) + l * l * 9 + l * 12 * 9, 1e-6);
}

TEST(ArchCost, PlksrMatchesTheHandCount) {
  // src/models/plksr.cpp: the stem (3 -> c), per block the CCM (3x3 c -> 2c, 1x1 2c -> c), the
  // 17x17 over c / 4 channels, the attention's 3x3 and the 1x1 refine, then the tail c -> 3 s^2.
  const double c = 64, p = 16, s = 4;
  const double block = c * 2 * c * 9 + 2 * c * c + p * p * 17 * 17 + c * c * 9 + c * c;
  const ArchCost k = cost("plksr", 4, {{"dim", 64}, {"n_blocks", 28}, {"kernel_size", 17}, {"lk_channels", 16}});
  EXPECT_NEAR(k.macs_per_px, 3 * c * 9 + 28 * block + c * 3 * s * s * 9, 1e-6);
  EXPECT_TRUE(k.tiled);
  EXPECT_EQ(k.size_multiple, 1);
  // 28 blocks see 282 px; the context is capped (src/arch/plksr_walk.cpp).
  EXPECT_EQ(k.tile_overlap, 48);
  // The mixer's 2c hidden channels beside the block input and the mixer's own input.
  EXPECT_GE(k.peak_elems_per_px, 4 * c);
  // PLKSR-tiny: 12 blocks, kernel 13; ICCM swaps the mixer's kernels (the same MACs); no
  // attention drops its 3x3.
  const double tiny = c * 2 * c * 9 + 2 * c * c + p * p * 13 * 13 + c * c * 9 + c * c;
  EXPECT_NEAR(cost("plksr", 2, {{"dim", 64}, {"n_blocks", 12}, {"kernel_size", 13}, {"lk_channels", 16}}).macs_per_px,
              3 * c * 9 + 12 * tiny + c * 12 * 9, 1e-6);
  EXPECT_NEAR(cost("plksr", 2, {{"n_blocks", 12}, {"mixer_kernel_in", 1}, {"mixer_kernel_out", 3}, {"ea", 0}}).macs_per_px,
              3 * c * 9 + 12 * (block - c * c * 9) + c * 12 * 9, 1e-6);
  // A small network's context is its receptive field: 1 + 2 * (1 + 8 + 1) + 1.
  EXPECT_EQ(cost("plksr", 2, {{"dim", 16}, {"n_blocks", 2}}).tile_overlap, 22);
}

TEST(ArchCost, RealPlksrMatchesTheHandCountAndItsGroupNormIsNotTiled) {
  // src/models/realplksr.cpp: as PLKSR with a DCCM mixer (3x3 c -> 2c, 3x3 2c -> c).
  const double c = 64, p = 16, s = 4;
  const double block = c * 2 * c * 9 * 2 + p * p * 17 * 17 + c * c * 9 + c * c;
  const ArchCost gn = cost("realplksr", 4, {{"dim", 64}, {"n_blocks", 28}, {"layer_norm", 0}});
  EXPECT_NEAR(gn.macs_per_px, 3 * c * 9 + 28 * block + c * 3 * s * s * 9, 1e-6);
  // GroupNorm: statistics over the whole frame, so no tiles; LayerNorm is per pixel.
  EXPECT_FALSE(gn.tiled);
  const ArchCost ln = cost("realplksr", 4, {{"dim", 64}, {"n_blocks", 28}, {"layer_norm", 1}});
  EXPECT_TRUE(ln.tiled);
  EXPECT_EQ(ln.tile_overlap, 48);
  EXPECT_NEAR(ln.macs_per_px, gn.macs_per_px, 1e-6);
  // DySample at x2 (4 groups): two 1x1s 12 -> 32 and the 1x1 12 -> 3 at the output size.
  const ArchCost dy = cost("realplksr", 2, {{"layer_norm", 1}, {"dysample", 1}});
  const ArchCost shuffle = cost("realplksr", 2, {{"layer_norm", 1}});
  EXPECT_NEAR(dy.macs_per_px - shuffle.macs_per_px, 2 * 12 * 32 + 12 * 3 * 4, 1e-6);
  EXPECT_FALSE(declaration("realplksr").runs_in(Precision::Fp16));
}

TEST(ArchCost, SafmnAndMosrMatchTheHandCount) {
  // SAFMN x4 (dim 36, 8 blocks, MLP 72): per block the levels' depthwise 3x3s (counted at full
  // size), the 1x1 aggregation and the conv MLP (3x3 up, 1x1 down); the stem and the 3x3 to 48.
  const double c = 36;
  const double safmn_block = c * 9 + c * c + c * 72 * 9 + 72 * c;
  EXPECT_NEAR(cost("safmn", 4, {{"dim", c}, {"n_blocks", 8}, {"ffn_hidden", 72}}).macs_per_px,
              3 * c * 9 + 8 * safmn_block + c * 48 * 9, 1e-6);
  EXPECT_EQ(cost("safmn", 4).size_multiple, 8);
  // MoSR x4 (dim 64, 24 blocks, hidden 96, a 7x7 depthwise on all 64): per block the 3x3 to 192,
  // the depthwise and the 3x3 back; the tail, the input's shortcut and the 3x3 to 48.
  const double d = 64;
  const double mosr_block = d * 192 * 9 + d * 49 + 96 * d * 9;
  EXPECT_NEAR(cost("mosr", 4, {{"dim", d}, {"n_block", 24}, {"hidden", 96}, {"conv_channels", d}, {"kernel_size", 7}}).macs_per_px,
              3 * d * 9 + 24 * mosr_block + d * 2 * d * 9 + 2 * d * d * 9 + d * d + 3 * d * 9 + d * d * 9 + 3 * d + d * 48 * 9, 1e-6);
}

TEST(ArchCost, DrunetMatchesTheHandCount) {
  // drunet_color (nc 64/128/256/512, nb 4): the 3x3 head on RGB plus the noise plane; per level
  // (area 1, 1/4, 1/16) nb blocks of two 3x3 down and nb up, a 2x2 stride-2 convolution down and a
  // 2x2 transposed one up (both counted at the lower level's area); nb blocks at 1/64; the tail.
  const double nc[] = {64, 128, 256, 512}, nb = 4;
  double macs = 4 * 64 * 9 + 64 * 3 * 9 + nb * 2 * 512 * 512 * 9 / 64;
  for (int i = 0; i < 3; ++i) {
    const double a = 1.0 / (1 << (2 * i));
    macs += 2 * nb * 2 * nc[i] * nc[i] * 9 * a + 2 * nc[i] * nc[i + 1] * 4 * a / 4;
  }
  const ArchCost k = cost("drunet", 1, {{"nc0", 64}, {"nc1", 128}, {"nc2", 256}, {"nc3", 512}, {"nb", 4}});
  EXPECT_NEAR(k.macs_per_px, macs, 1e-6);
  EXPECT_EQ(k.size_multiple, 8);
  EXPECT_EQ(k.tile_overlap, 32);
  // The head's 64 channels are kept for the tail while a block at full size runs.
  EXPECT_GE(k.peak_elems_per_px, 3 * 64);
}

TEST(ArchCost, NafnetMatchesTheHandCount) {
  // SIDD width 32 (enc 2/2/4/8, middle 12, dec 2/2/2/2): a block at width c costs 6c^2 + 18c per
  // pixel of its level (1x1 to 2c, the depthwise 3x3 on 2c, 1x1 back, 1x1 to 2c, 1x1 back; the
  // attention's 1x1 runs on one pixel); a 2x2 stride-2 down to 2c and a 1x1 to 2c before the
  // shuffle up, at the lower level's area; the intro and ending 3x3.
  const double enc[] = {2, 2, 4, 8}, dec[] = {2, 2, 2, 2};
  auto block = [](double c) { return 6 * c * c + 18 * c; };
  double macs = 3 * 32 * 9 * 2, c = 32, a = 1;
  for (int i = 0; i < 4; ++i, c *= 2, a /= 4) macs += enc[i] * block(c) * a + c * 2 * c * 4 * a / 4;
  macs += 12 * block(c) * a;
  for (int i = 0; i < 4; ++i, c /= 2, a *= 4) macs += c * 2 * c * a + dec[i] * block(c / 2) * a * 4;
  const ArchCost k = cost("nafnet", 1, {{"width", 32}, {"levels", 4}, {"enc0", 2}, {"enc1", 2}, {"enc2", 4}, {"enc3", 8},
                                        {"middle", 12}, {"dec0", 2}, {"dec1", 2}, {"dec2", 2}, {"dec3", 2}});
  EXPECT_NEAR(k.macs_per_px, macs, 1e-6);
  EXPECT_EQ(k.size_multiple, 1);  // it pads itself,
  EXPECT_EQ(k.tile_grid, 16);     // but its tiles stay on the frame's grid of four halvings
  EXPECT_EQ(k.tile_alignment(), 16);
  EXPECT_EQ(cost("nafnet", 1, {{"levels", 2}}).tile_grid, 4);
}

TEST(ArchCost, FbcnnMatchesTheHandCount) {
  // fbcnn_color: DRUNet's U-Net on RGB alone, plus two more stacks of nb blocks at 1/64 (the
  // decoder's and the quality predictor's; the MLPs run once per image).
  const double nc[] = {64, 128, 256, 512}, nb = 4;
  double macs = 3 * 64 * 9 + 64 * 3 * 9 + 3 * nb * 2 * 512 * 512 * 9 / 64;
  for (int i = 0; i < 3; ++i) {
    const double a = 1.0 / (1 << (2 * i));
    macs += 2 * nb * 2 * nc[i] * nc[i] * 9 * a + 2 * nc[i] * nc[i + 1] * 4 * a / 4;
  }
  const ArchCost k = cost("fbcnn", 1, {{"nc0", 64}, {"nc1", 128}, {"nc2", 256}, {"nc3", 512}, {"nb", 4}});
  EXPECT_NEAR(k.macs_per_px, macs, 1e-6);
  EXPECT_EQ(k.size_multiple, 1);  // it pads itself,
  EXPECT_EQ(k.tile_grid, 8);      // but its tiles stay on the frame's grid of three halvings
  EXPECT_EQ(cost("drunet", 1).tile_alignment(), 8);
}

TEST(ArchCost, ScunetMatchesTheHandCount) {
  // scunet_color (dim 64, head_dim 32, four blocks a stack): a block with h channels a half costs
  // 38 h^2 + 128 h per pixel of its level (the 1x1 split and merge on 2h, two 3x3 on h, q/k/v and
  // the projection, the 4x MLP, attention over 64 tokens); a 2x2 stride-2 convolution down and a
  // 2x2 transposed one up at the lower level's area; the bias-free 3x3 head and tail.
  auto block = [](double h) { return 38 * h * h + 128 * h; };
  double macs = 2 * 3 * 64 * 9 + 4 * block(4 * 64) / 64;
  for (int i = 0; i < 3; ++i) {
    const double c = 64 << i, a = 1.0 / (1 << (2 * i));
    macs += 2 * 4 * block(c / 2) * a + 2 * c * 2 * c * 4 * a / 4;
  }
  const ArchCost k = cost("scunet", 1, {{"dim", 64}, {"head_dim", 32}});
  EXPECT_NEAR(k.macs_per_px, macs, 1e-6);
  EXPECT_EQ(k.size_multiple, 64);  // three halvings of 8 px windows
  EXPECT_EQ(k.tile_overlap, 64);
  EXPECT_EQ(k.tile_alignment(), 64);
  // The head's 64 channels are kept for the tail while a full-size block runs on them.
  EXPECT_GE(k.peak_elems_per_px, 3 * 64);
}

TEST(ArchTable, EveryDeclarationWalksAtEveryScaleItComesIn) {
  for (const Declaration& d : declarations()) {
    EXPECT_FALSE(d.description.empty()) << d.name;
    EXPECT_TRUE(d.runs_in(Precision::Fp32)) << d.name << ": fp32 is the reference path";
    ASSERT_FALSE(d.scales.empty()) << d.name;
    for (int s : d.scales) {
      const ArchCost k = cost(d.name, s);
      EXPECT_EQ(k.arch, d.name);
      EXPECT_GT(k.macs_per_px, 0) << d.name << " x" << s;
      EXPECT_GT(k.params, 0) << d.name << " x" << s;
      EXPECT_GE(k.size_multiple, 1) << d.name;
    }
    EXPECT_EQ(find_declaration(d.name), &d);
  }
  EXPECT_EQ(find_declaration("no_such_arch"), nullptr);
  EXPECT_THROW(cost("srvgg_compact", 5), framelift::Error);
}

TEST(ArchParams, KeepTheirOrderAndRoundTripThroughJson) {
  ArchParams p{{"nf", 64}, {"nb", 23}};
  p["gc"] = 32;
  p["nb"] = 6;  // replaces, keeps the place
  std::vector<std::string> names;
  for (const auto& [name, value] : p) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"nf", "nb", "gc"}));
  EXPECT_EQ(p.get("nb", 0), 6);
  EXPECT_EQ(p.get("missing", 7), 7);
  const nlohmann::json j = p;
  EXPECT_TRUE(j["nb"].is_number_integer());
  const ArchParams back = j.get<ArchParams>();
  EXPECT_EQ(back.get("nf", 0), 64);
  EXPECT_EQ(back.get("gc", 0), 32);
  EXPECT_EQ(back.size(), 3u);
}

TEST(ArchCost, AtdMatchesTheHandCount) {
  // ATD x4 (embed 210, 6 groups of 6 layers, 6 heads, window 16, 128 tokens, reduced 20, kernel 5,
  // mlp 420, category 256): per layer the qkv (3E^2), the window attention over 256 tokens and the
  // category attention over 256 (2 * 256 * E each) with their projections (E^2 each), the
  // dictionary attention (q to 20 dims, 128 cosine scores, their values: E r + r m + m E), the
  // ConvFFN (fc1, a depthwise 5x5, fc2); per group a 3x3.
  const double e = 210, h = 420, m = 128, r = 20;
  const ArchCost k = cost("atd", 4, {{"embed_dim", e}, {"layers", 6}, {"depth", 6}, {"heads", 6}, {"window_size", 16},
                                     {"num_tokens", m}, {"reducted_dim", r}, {"convffn_kernel", 5}, {"mlp_hidden", h},
                                     {"category_size", 256}, {"upsampler", 1}});
  const double layer = 3 * e * e + 2 * 256 * e + e * e + 2 * 256 * e + e * e + e * r + r * m + m * e + e * h + 25 * h + h * e;
  const double group = 6 * layer + e * e * 9;
  EXPECT_NEAR(k.macs_per_px, 3 * e * 9 + 6 * group + e * e * 9 + e * 64 * 9 + 64 * 256 * 9 * (1 + 4) + 64 * 3 * 9 * 16, 1e-6);
  // The network pads itself; tiles on the window grid with 64 px of context.
  EXPECT_EQ(k.size_multiple, 1);
  EXPECT_EQ(k.tile_grid, 16);
  EXPECT_EQ(k.tile_overlap, 64);
  EXPECT_GE(k.peak_elems_per_px, 2 * 6 * 256);
}
