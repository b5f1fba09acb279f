// Fast neural style (TransformerNet of pytorch/examples), network in src/models/fast_neural_style.cpp:
// a 9x9 convolution, two stride-2 3x3, residual blocks of two 3x3 at a quarter of the size, two
// nearest-2x-then-3x3 upsamplings and a 9x9 to RGB, each but the last with an instance
// normalisation (statistics over the whole frame: untiled). Widths c1, c2, c3 and the block count
// from the checkpoint (published: 32, 64, 128 and 5).
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

ArchCost walk(int, const ArchParams& p) {
  const double c1 = p.get("c1", 32), c2 = p.get("c2", 64), c3 = p.get("c3", 128);
  const int blocks = int(p.get("blocks", 5));
  NetWalk w(3);
  w.pointwise();  // x 255
  const auto conv_norm = [&](double out, int k, int stride = 1, bool relu = true) {
    w.pointwise();  // the reflection-padded copy
    w.conv(out, k, stride);
    w.pointwise();  // instance norm
    if (relu) w.pointwise();
  };
  conv_norm(c1, 9);
  conv_norm(c2, 3, 2);
  conv_norm(c3, 3, 2);
  for (int b = 0; b < blocks; ++b)
    residual(w, [&] {
      conv_norm(c3, 3);
      conv_norm(c3, 3, 1, false);
    });
  w.resize(2);
  conv_norm(c2, 3);
  w.resize(2);
  conv_norm(c1, 3);
  w.pointwise();
  w.conv(3, 9);
  w.pointwise();  // / 255
  return w.finish("fast_neural_style", 1, 0, 1, false);
}

}  // namespace

Declaration fast_neural_style_declaration() {
  return {.name = "fast_neural_style",
          .description = "Fast neural style transfer (Johnson et al., TransformerNet)",
          .scales = {1},
          .walk = walk,
          .axes = {{"c1", "conv1.conv2d.weight", 0}, {"c2", "conv2.conv2d.weight", 0}, {"c3", "conv3.conv2d.weight", 0}},
          .constraints = {positive("c1"), positive("c2"), positive("c3"), at_most("blocks", kMaxBlocks)}};
}

}  // namespace framelift::arch
