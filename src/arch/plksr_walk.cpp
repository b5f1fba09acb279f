#include "arch/plksr_walk.h"

#include <algorithm>

namespace framelift::arch {
namespace {

// Context beyond which a tile's output no longer changes is the receptive field; past 48 px the
// planner would pay for ever wider tiles for differences the 50 dB gate does not see
// (tests/models/arch_plksr_test.cpp checks the small networks, whose field is below it).
constexpr int kMaxOverlap = 48;

void block(NetWalk& w, const PlksrShape& s) {
  w.keep();  // the block's input, for the residual
  if (s.layer_norm) {
    w.pointwise();  // x - mean
    w.pointwise();  // / std, affine
  }
  w.conv(2 * s.dim, s.mixer_in);
  w.pointwise();  // GELU / Mish
  w.conv(s.dim, s.mixer_out);
  // The large kernel reads the first channels of the mixer's output, alive until the concat.
  w.keep();
  w.set(s.lk_channels, 1);
  w.conv(s.lk_channels, int(s.kernel));
  w.concat(s.dim);
  w.release(s.dim, 1);
  if (s.attention) {
    w.keep();
    w.conv(s.dim, 3);
    w.pointwise();  // sigmoid
    w.pointwise();  // x * attention
    w.release(s.dim, 1);
  }
  w.conv(s.dim, 1);
  if (s.group_norm) w.pointwise();
  w.pointwise();  // + x
  w.release(s.dim, 1);
}

// DySample: offsets and scopes from 1x1s, sampling positions at the output size, the sampled
// features, and (above 1x) a 1x1 to RGB.
void dysample(NetWalk& w, int scale) {
  const double s2 = double(scale) * scale, groups = scale % 2 ? 3 : 4, positions = 2 * groups * s2;
  w.keep();
  w.conv(positions, 1);  // offset
  w.keep();
  w.set(3 * s2, 1);
  w.conv(positions, 1);  // scope
  w.pointwise();         // offset * sigmoid(scope) * 0.5 + init_pos, to coordinates
  w.release(positions, 1);
  w.set(3 * s2, 1);
  w.resize(scale);  // grid_sample: 3 s^2 channels at s^2 the area
  w.release(3 * s2, 1);
  if (scale != 1) w.conv(3, 1);
}

int receptive_field(const PlksrShape& s) {
  const int per_block = s.mixer_in / 2 + s.mixer_out / 2 + int(s.kernel) / 2 + (s.attention ? 1 : 0);
  return 2 + int(s.blocks) * per_block;
}

}  // namespace

ArchCost plksr_walk(const std::string& arch, int scale, const PlksrShape& s, bool tiled) {
  NetWalk w(3);
  w.keep();  // the input, added to the tail's output
  w.conv(s.dim, 3);
  for (int i = 0; i < int(s.blocks); ++i) block(w, s);
  w.conv(3.0 * scale * scale, 3);
  w.extra(3.0 * scale * scale);  // the input, each channel repeated scale^2 times
  w.pointwise();
  w.release(3, 1);
  if (s.dysample) dysample(w, scale);
  else w.shuffle(scale);
  return w.finish(arch, scale, std::min(kMaxOverlap, receptive_field(s)), 1, tiled);
}

}  // namespace framelift::arch
