// RIFE 4.x flow estimation, network in src/models/rife_native.cpp: 4.6's four IFBlocks at 1/8,
// 1/4, 1/2, 1/1 of the frame (widths 192, 128, 96, 64), each two stride-2 convs, eight residual
// convs, a deconvolution, then two backward warps at full size; 4.22+ add a feature encoder and
// take their blocks' widths and scales from the checkpoint (params) and arch/rife_versions.h. Costs are per interpolated frame, per
// pixel of the frame; the whole frame goes through at once (flow needs all of it).
#include <string>
#include <vector>

#include "arch/builtin.h"
#include "arch/rife_versions.h"

namespace framelift::arch {
namespace {

// One IFBlock on `in` input planes (flow included) at 1/divisor of the frame, `out` planes back.
void block(NetWalk& w, double in, double width, double divisor, double out) {
  w.set(in, 1);
  w.concat(in);
  w.resize(1.0 / divisor);
  w.conv(width / 2, 3, 2);
  w.conv(width, 3, 2);
  for (int j = 0; j < 8; ++j) {
    w.conv(width, 3);
    w.pointwise();
  }
  w.deconv(4 * out, 4, 2);
  w.shuffle(2);
  w.resize(divisor);
}

// 4.6: four blocks of 192/128/96/64 at 1/8..1/1, 6 planes out, the frames warped after each.
ArchCost walk_v46() {
  NetWalk w(7);
  w.keep();  // img0, img1, timestep
  w.extra(6 + 4 + 1);  // warped0/1, flow, mask live across blocks
  const double widths[4] = {192, 128, 96, 64}, divisors[4] = {8, 4, 2, 1};
  for (int i = 0; i < 4; ++i) {
    block(w, i == 0 ? 7 : 12, widths[i], divisors[i], 6);
    w.set(3, 1);
    w.pointwise();  // warp img0
    w.pointwise();  // warp img1
  }
  return w.finish("rife", 1, 0, 32, false);
}

// 4.22 and later: the encoder on both frames (a stride-2 conv, two convs, a deconvolution back),
// then blocks on frames, warped features, timestep, mask and the previous block's 8 features,
// 13 planes out; frames and features warped after each. Scales and padding from the version table.
ArchCost walk_with_encoder(const ArchParams& p) {
  const double f = p.get("features", 4), hidden = p.get("hidden", 16);
  std::vector<int> widths;
  for (int i = 0; i < int(p.get("blocks", 5)); ++i) widths.push_back(int(p.get("width" + std::to_string(i), 32)));
  const RifeVersion v = rife_version_for(int(f), widths);
  // Both frames through the encoder as one tensor of twice the area: twice the work, the weights once.
  NetWalk w(3);
  w.set(3, 2);
  w.conv(hidden, 3, 2);
  w.conv(hidden, 3);
  w.conv(hidden, 3);
  w.deconv(f, 4, 2);
  w.keep();  // the frames' features, warped by every block
  w.extra(6 + 4 + 1 + 8);  // warped frames, flow, mask and the blocks' features live across blocks
  for (size_t i = 0; i < widths.size(); ++i) {
    block(w, i == 0 ? 7 + 2 * f : 8 + 4 + 2 * f + 8, widths[i], v.divisors[i], 13);
    w.set(3 + f, 1);
    w.pointwise();  // warp img0 and f0
    w.pointwise();  // warp img1 and f1
  }
  return w.finish("rife", 1, 0, v.modulo, false);
}

ArchCost walk(const ArchParams& p) { return p.get("features", 0) > 0 ? walk_with_encoder(p) : walk_v46(); }

}  // namespace

// bf16 on the CPU keeps three fp32 islands (src/infer/fp32_islands.h): the input padding and the
// transposed convolutions, which libtorch 1.13 has no bf16 kernel for, and the warp's sampling
// grid, which needs fp32's resolution for sub-pixel flow (src/models/backward_warp.cpp).
Declaration rife_declaration() { return interpolator_declaration("rife", "RIFE 4.x frame interpolation (IFNet)", walk); }

}  // namespace framelift::arch
