// PLKSR (Partial Large Kernel CNNs for Efficient Super-Resolution), network in
// src/models/plksr.cpp: a 3x3 stem, n_blocks blocks (a two-convolution channel mixer, a large
// kernel over dim * split_ratio channels, an element-wise attention, a 1x1) and a 3x3 to
// 3 * scale^2 plus the input, pixel-shuffled. Published: dim 64, 28 blocks, kernel 17
// (PLKSR) and 12 blocks, kernel 13 (PLKSR-tiny). No windows, no statistics: any input, tiled.
#include "arch/builtin.h"
#include "arch/plksr_walk.h"

namespace framelift::arch {
namespace {

ArchCost walk(int scale, const ArchParams& p) {
  PlksrShape s;
  s.dim = p.get("dim", 64);
  s.blocks = p.get("n_blocks", 28);
  s.kernel = p.get("kernel_size", 17);
  s.lk_channels = p.get("lk_channels", s.dim / 4);
  s.mixer_in = int(p.get("mixer_kernel_in", 3));
  s.mixer_out = int(p.get("mixer_kernel_out", 1));
  s.attention = p.get("ea", 1) != 0;
  return plksr_walk("plksr", scale, s, true);
}

}  // namespace

Declaration plksr_declaration() {
  // The last conv (feats.<n_blocks + 1>, whose outputs give the scale) has no fixed name to declare.
  return {.name = "plksr",
          .description = "PLKSR (Partial Large Kernel CNN)",
          .scales = {1, 2, 3, 4},
          .walk = walk,
          .axes = {{"dim", "feats.0.weight", 0},
                   {"in_channels", "feats.0.weight", 1},
                   {"mixer_kernel_in", "feats.1.channe_mixer.0.weight", 2},
                   {"mixer_kernel_out", "feats.1.channe_mixer.2.weight", 2},
                   {"lk_channels", "feats.1.lk.conv.weight", 0},
                   {"kernel_size", "feats.1.lk.conv.weight", 2},
                   {"lk_channels", "feats.1.lk.mn_conv.weight", 0},  // the rectangular-sparse layout's
                   {"kernel_size", "feats.1.lk.mn_conv.weight", 2}},
          // The large kernel convolves the first lk_channels of dim (and pads kernel_size / 2, the
          // rectangular one kernel_size / 3 too); the mixers pad theirs by half.
          .constraints = {positive("dim"), positive("lk_channels"), no_more_than("lk_channels", "dim"), positive("kernel_size"),
                          at_most("kernel_size", 255), positive("mixer_kernel_in"), at_most("mixer_kernel_in", 255),
                          positive("mixer_kernel_out"), at_most("mixer_kernel_out", 255), positive("n_blocks"),
                          at_most("n_blocks", kMaxBlocks)}};
}

}  // namespace framelift::arch
