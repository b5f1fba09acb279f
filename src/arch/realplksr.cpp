// RealPLKSR, network in src/models/realplksr.cpp: PLKSR's walk (plksr_walk.h) with a DCCM
// mixer (two 3x3s) and a normalisation per block, ending in a pixel shuffle or DySample.
// Its default GroupNorm normalises by statistics of the whole frame, so such a model is not
// tiled (a tile would be normalised by its own); the layer_norm variant is per pixel and is.
// fp16 is not declared: spandrel marks the GroupNorm models as not half-safe, and one
// declaration covers both variants.
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
  s.mixer_in = s.mixer_out = 3;
  s.attention = p.get("ea", 1) != 0;
  s.layer_norm = p.get("layer_norm", 0) != 0;
  s.group_norm = !s.layer_norm;
  s.dysample = p.get("dysample", 0) != 0;
  return plksr_walk("realplksr", scale, s, /*tiled*/ s.layer_norm);
}

}  // namespace

Declaration realplksr_declaration() {
  return {.name = "realplksr",
          .description = "RealPLKSR (PLKSR for real-world degradations)",
          .scales = {1, 2, 3, 4},
          .precisions = {Precision::Fp32, Precision::Bf16},
          .walk = walk,
          .axes = {{"dim", "feats.0.weight", 0},
                   {"in_channels", "feats.0.weight", 1},
                   {"lk_channels", "feats.1.lk.conv.weight", 0},
                   {"kernel_size", "feats.1.lk.conv.weight", 2}},
          // As PLKSR's: the large kernel convolves the first lk_channels of dim. The GroupNorm's
          // groups (dim a multiple of 4 without the layer norm) are checked by the detector.
          .constraints = {positive("dim"), positive("lk_channels"), no_more_than("lk_channels", "dim"), positive("kernel_size"),
                          at_most("kernel_size", 255), positive("n_blocks"), at_most("n_blocks", kMaxBlocks)}};
}

}  // namespace framelift::arch
