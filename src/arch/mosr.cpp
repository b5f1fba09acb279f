// MoSR, network in src/models/mosr.cpp: a 3x3, gated CNN blocks (3x3 to 2 hidden, a k x k
// depthwise on part of it, a 3x3 back), a conv tail, a conv shortcut of the input, and a pixel
// shuffle, geo-ensemble shuffle or DySample upsampler. No windows: any input size.
#include <algorithm>

#include "arch/builtin.h"

namespace framelift::arch {
namespace {

ArchCost walk(int scale, const ArchParams& p) {
  const double dim = p.get("dim", 64), hidden = p.get("hidden", 96), conv = p.get("conv_channels", dim);
  const int blocks = int(p.get("n_block", 24)), k = int(p.get("kernel_size", 7)), upsampler = int(p.get("upsampler", 0));
  NetWalk w(3);
  w.keep();  // the input, for the shortcut
  w.conv(dim, 3);
  for (int b = 0; b < blocks; ++b) {
    w.keep();
    w.pointwise();  // norm
    w.conv(2 * hidden, 3);
    w.set(conv, w.area());
    w.depthwise(k);
    w.set(hidden, w.area());
    w.pointwise();  // mish(g) * [i, c]
    w.conv(dim, 3);
    w.pointwise();  // mish, + (x - 0.5)
    w.release(dim, 1);
  }
  w.conv(2 * dim, 3);
  w.conv(dim, 3);
  w.conv(dim, 1);
  w.keep();
  w.set(3, 1);  // the shortcut, from the input
  w.conv(dim, 3);
  w.conv(dim, 3);
  w.set(3, 1);
  w.conv(dim, 1);
  w.pointwise();  // + the body
  const double s2 = double(scale) * scale;
  if (upsampler == 1) {
    w.conv(8 * 3 * s2, 3);
    w.pointwise();  // the ensemble's mean
  } else if (upsampler == 2) {
    w.conv(2 * 4 * s2, 1);  // offset and scope
    w.conv(2 * 4 * s2, 1);
    w.resize(scale);        // the sampling
    w.set(dim, scale * scale);
    w.conv(3, 1);
  } else {
    w.conv(3 * s2, 3);
  }
  if (upsampler != 2) w.shuffle(scale);
  // Each block's 3x3s and k x k depthwise reach (2 + k / 2) px; 48 px of context, the cap the
  // other deep nets take, keeps tiles within 50 dB on the references (arch_mosr_test.cpp).
  return w.finish("mosr", scale, 48, 1);
}

}  // namespace

Declaration mosr_declaration() {
  return {.name = "mosr",
          .description = "MoSR (MambaOut-style gated CNN super-resolution)",
          .scales = {1, 2, 3, 4},
          .walk = walk,
          .axes = {{"dim", "gblocks.0.weight", 0},
                   {"in_channels", "gblocks.0.weight", 1},
                   {"hidden", "gblocks.1.fc1.weight", 0},  // 2 hidden
                   {"conv_channels", "gblocks.1.conv.weight", 0},
                   {"kernel_size", "gblocks.1.conv.weight", 2},
                   // one of three upsamplers: out * scale^2, 8 out * scale^2, or DySample's 2 * 4 * scale^2 offsets
                   {"scale", "upsampler.0.weight", 0},
                   {"scale", "upsampler.in_to_k.weight", 0},
                   {"scale", "upsampler.offset.weight", 0},
                   {"out_channels", "upsampler.end_conv.weight", 0}},
          // fc1's output splits into hidden, hidden - conv_channels and conv_channels; the
          // depthwise conv pads kernel_size / 2. DySample's 4 groups (dim / 4 each) are checked by
          // the detector, as only that upsampler has them.
          .constraints = {positive("dim"), positive("hidden"), positive("conv_channels"), no_more_than("conv_channels", "hidden"),
                          positive("kernel_size"), at_most("kernel_size", 255), positive("n_block"),
                          at_most("n_block", kMaxBlocks)}};
}

}  // namespace framelift::arch
