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
  return {.name = "plksr", .description = "PLKSR (Partial Large Kernel CNN)", .scales = {1, 2, 3, 4}, .walk = walk};
}

}  // namespace framelift::arch
