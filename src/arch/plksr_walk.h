#pragma once
// The cost walk PLKSR (plksr.cpp) and RealPLKSR (realplksr.cpp) share: the same stem, blocks of
// mixer -> partial large kernel -> attention -> 1x1, tail and input residual; they differ in
// the mixer's kernels, the normalisation and the upsampler.
#include <string>

#include "arch/cost.h"

namespace framelift::arch {

struct PlksrShape {
  double dim = 64, blocks = 28, kernel = 17, lk_channels = 16;
  int mixer_in = 3, mixer_out = 1;  // kernel sizes of the channel mixer's two convolutions
  bool attention = true;
  bool layer_norm = false, group_norm = false;
  bool dysample = false;
};

// tiled = false when a block's normalisation takes statistics over the whole frame.
ArchCost plksr_walk(const std::string& arch, int scale, const PlksrShape& s, bool tiled);

}  // namespace framelift::arch
