// SPAN (Swift Parameter-free Attention Network), network in src/models/span.cpp: a Conv3XC stem
// (one 3x3 convolution at inference: its branches are composed at load), six SPAB blocks of three
// 3x3 convolutions with SiLU and a parameter-free attention, a 3x3, a 1x1 fusion of four kept
// feature maps, a 3x3 to out * scale^2 and pixel shuffle. No windows: any input size.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

ArchCost walk(int scale, const ArchParams& p) {
  const double f = p.get("feature_channels", 48);
  NetWalk w(3);
  if (p.get("norm", 1) != 0) w.pointwise();  // (x - mean) * 255
  w.conv(f, 3);
  w.keep();  // the stem's features, fused at the end
  for (int block = 1; block <= 6; ++block) {
    w.keep();  // the block's input, for (c3 + x)
    w.conv(f, 3);
    if (block == 6) w.keep();  // c1 of the last block, fused at the end
    w.pointwise();             // silu
    w.conv(f, 3);
    w.pointwise();  // silu
    w.conv(f, 3);
    w.extra(f);     // sigmoid(c3) - 0.5 beside c3 + x
    w.pointwise();  // (c3 + x) * attention
    w.release(f, 1);
    if (block == 1) w.keep();  // the first block's output, fused at the end
  }
  w.conv(f, 3);
  w.concat(4 * f);
  w.release(3 * f, 1);
  w.conv(f, 1);
  w.conv(3.0 * scale * scale, 3);
  w.shuffle(scale);
  // 21 3x3 convolutions: a receptive field of 21 px each side; 16 px of context keep tiled
  // output within 50 dB of whole-frame output (tests/models/arch_span_test.cpp).
  return w.finish("span", scale, 16, 1);
}

}  // namespace

Declaration span_declaration() {
  return {.name = "span",
          .description = "SPAN (Swift Parameter-free Attention Network)",
          .scales = {1, 2, 3, 4},
          .walk = walk,
          .axes = {{"feature_channels", "conv_1.sk.weight", 0},
                   {"in_channels", "conv_1.sk.weight", 1},
                   {"scale", "upsampler.0.weight", 0}},  // out_channels * scale^2
          .constraints = {positive("feature_channels")}};
}

}  // namespace framelift::arch
