// ESRGAN / Real-ESRGAN RRDBNet, network in src/models/rrdbnet.cpp: nb RRDBs of three 5-conv dense
// blocks (concatenations of nf + k * gc channels), then one nearest x2 + conv per upscaling step,
// conv_hr and conv_last. The tail at full output size, not the trunk, is the peak for x4 models.
// Scales 1 and 2 pixel-unshuffle the input first (by 4 and 2), so inputs are multiples of that.
#include <cmath>

#include "arch/builtin.h"

namespace framelift::arch {
namespace {

ArchCost walk(int scale, const ArchParams& p) {
  const double nf = p.get("nf", 64), nb = p.get("nb", 23), gc = p.get("gc", 32);
  const int unshuffle = static_cast<int>(p.get("pixel_unshuffle", scale == 4 ? 1 : scale == 2 ? 2 : 4));
  const int ups = static_cast<int>(std::lround(std::log2(scale * unshuffle)));
  NetWalk w(3);
  if (unshuffle > 1) w.shuffle(-unshuffle);
  w.conv(nf, 3);
  w.keep();  // feat, for the trunk's residual
  const double a = w.area();
  for (int b = 0; b < nb; ++b) {
    w.keep();  // the RRDB's input
    for (int d = 0; d < 3; ++d) {
      w.keep();  // the dense block's input, feats[0]
      for (int k = 0; k < 5; ++k) {
        w.concat(nf + k * gc);
        w.conv(k == 4 ? nf : gc, 3);
        if (k < 4) w.keep();
      }
      w.release(nf + 4 * gc, a);
    }
    w.release(nf, a);
  }
  w.conv(nf, 3);
  w.release(nf, a);
  for (int i = 0; i < ups; ++i) {
    w.resize(2);
    w.conv(nf, 3);
  }
  w.conv(nf, 3);
  w.conv(3, 3);
  return w.finish("rrdbnet", scale, 16, unshuffle);
}

}  // namespace

Declaration rrdbnet_declaration() {
  // Real-ESRGAN's key names (the BSRGAN and old ESRGAN layouts are renamed to them before detection).
  return {.name = "rrdbnet",
          .description = "ESRGAN / Real-ESRGAN (RRDBNet)",
          .scales = {1, 2, 4, 8},
          .walk = walk,
          .axes = {{"nf", "conv_first.weight", 0},
                   {"in_channels", "conv_first.weight", 1},  // times pixel_unshuffle^2
                   {"gc", "body.0.rdb1.conv1.weight", 0},
                   {"out_channels", "conv_last.weight", 0}},
          // The builder reads nb blocks and upsample_steps convs (x2 each), and conv_first takes
          // in_channels * pixel_unshuffle^2: the two counts come off key names.
          .constraints = {positive("nf"), positive("gc"), positive("nb"), at_most("nb", kMaxBlocks),
                          in_range("upsample_steps", 0, 4), in_range("pixel_unshuffle", 1, 4)}};
}

}  // namespace framelift::arch
