// SAFMN, network in src/models/safmn.cpp: a 3x3, blocks of a spatially-adaptive modulation (four
// chunks at 1/1..1/8 through depthwise 3x3s, a 1x1, GELU, times x) and a conv MLP (3x3 up, 1x1
// down), both pre-normalised and residual, then a 3x3 and a pixel shuffle. Multiples of 8.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

ArchCost walk(int scale, const ArchParams& p) {
  const double dim = p.get("dim", 36), hidden = p.get("ffn_hidden", 2 * dim);
  const int blocks = int(p.get("n_blocks", 8));
  NetWalk w(3);
  w.conv(dim, 3);
  w.keep();  // the first features, added before the upsampler
  for (int b = 0; b < blocks; ++b) {
    w.keep();
    w.pointwise();   // norm
    w.depthwise(3);  // the four levels' depthwise 3x3s, counted at full size (an upper bound)
    w.conv(dim, 1);
    w.pointwise();   // gelu * x
    w.pointwise();   // + x
    w.release(dim, 1);
    w.keep();
    w.pointwise();  // norm
    w.conv(hidden, 3);
    w.pointwise();  // gelu
    w.conv(dim, 1);
    w.pointwise();  // + x
    w.release(dim, 1);
  }
  w.pointwise();  // + first
  w.release(dim, 1);
  w.conv(3.0 * scale * scale, 3);
  w.shuffle(scale);
  // The pooled levels reach 8 px cells; each block's 3x3 adds one pixel. 16 px of context keep
  // tiles within 50 dB of whole frames (tests/models/arch_safmn_test.cpp).
  return w.finish("safmn", scale, 48, 8);
}

}  // namespace

Declaration safmn_declaration() {
  return {.name = "safmn",
          .description = "SAFMN (Spatially-Adaptive Feature Modulation Network)",
          .scales = {2, 3, 4},
          .walk = walk,
          .axes = {{"dim", "to_feat.weight", 0}, {"ffn_hidden", "feats.0.ccm.ccm.0.weight", 0}, {"scale", "to_img.0.weight", 0}},
          // The modulation splits dim into 4 levels (dim / 4 channels each); blocks counted off key names.
          .constraints = {positive("dim"), multiple_of("dim", 4), positive("ffn_hidden"), positive("n_blocks"),
                          at_most("n_blocks", kMaxBlocks)}};
}

}  // namespace framelift::arch
