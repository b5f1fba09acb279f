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
  return {.name = "srvgg_compact", .description = "Real-ESRGAN Compact (SRVGGNetCompact)", .scales = {1, 2, 3, 4}, .walk = walk};
}

}  // namespace framelift::arch
