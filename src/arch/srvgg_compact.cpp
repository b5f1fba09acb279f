// Real-ESRGAN Compact (SRVGGNetCompact), network in src/models/srvgg_compact.cpp: conv + PReLU
// (out of place) num_conv + 1 times, a conv to 3 * scale^2 channels, pixel shuffle, plus the
// nearest-upscaled input.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

ArchCost walk(int scale, const ArchParams& p) {
  const double feat = p.get("num_feat", 64), n = p.get("num_conv", 16);
  NetWalk w(3);
  w.keep();  // the input, for the residual
  for (int i = 0; i <= n; ++i) {
    w.conv(feat, 3);
    w.extra(feat);  // y = prelu(conv(y)): the old y is still referenced while prelu writes
    w.pointwise();
  }
  w.conv(3.0 * scale * scale, 3);
  w.shuffle(scale);
  w.extra(3.0 * scale * scale);  // upsample_nearest(x) before the add
  w.pointwise();
  // A receptive field of num_conv + 2 pixels; 8 px of context blends seamlessly (tiler tests).
  return w.finish("srvgg_compact", scale, 8, 1);
}

}  // namespace

Declaration srvgg_compact_declaration() {
  // The last conv (body.<2 num_conv + 2>, whose outputs give the scale) has no fixed name to declare.
  return {.name = "srvgg_compact",
          .description = "Real-ESRGAN Compact (SRVGGNetCompact)",
          .scales = {1, 2, 3, 4},
          .walk = walk,
          .axes = {{"num_feat", "body.0.weight", 0}, {"in_channels", "body.0.weight", 1}},
          // num_conv: counted off key names (body.N), as layers are.
          .constraints = {positive("num_feat"), at_most("num_conv", kMaxBlocks), equals("out_channels", "in_channels")}};
}

}  // namespace framelift::arch
