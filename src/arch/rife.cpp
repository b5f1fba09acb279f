// RIFE 4.x flow estimation, network in src/models/rife_native.cpp: four IFBlocks at 1/8, 1/4,
// 1/2, 1/1 of the frame (widths 192, 128, 96, 64), each two stride-2 convs, eight residual convs,
// a deconvolution, then two backward warps at full size. Costs are per interpolated frame, per
// pixel of the frame; the whole frame goes through at once (flow needs all of it).
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

ArchCost walk(int, const ArchParams&) {
  NetWalk w(7);
  w.keep();  // img0, img1, timestep
  w.extra(6 + 4 + 1);  // warped0/1, flow, mask live across blocks
  const double widths[4] = {192, 128, 96, 64}, scales[4] = {8, 4, 2, 1};
  for (int i = 0; i < 4; ++i) {
    w.set(i == 0 ? 7 : 12, 1);
    w.concat(i == 0 ? 7 : 12);
    w.resize(1.0 / scales[i]);
    w.conv(widths[i] / 2, 3, 2);
    w.conv(widths[i], 3, 2);
    for (int j = 0; j < 8; ++j) {
      w.conv(widths[i], 3);
      w.pointwise();
    }
    w.deconv(24, 4, 2);
    w.shuffle(2);
    w.resize(scales[i]);
    w.set(3, 1);
    w.pointwise();  // warp img0
    w.pointwise();  // warp img1
  }
  ArchCost c = w.finish("rife", 1, 0, 32, false);
  c.call_overhead_px = 26000;
  return c;
}

}  // namespace

// bf16 on the CPU keeps three fp32 islands (src/infer/fp32_islands.h): the input padding and the
// transposed convolutions, which libtorch 1.13 has no bf16 kernel for, and the warp's sampling
// grid, which needs fp32's resolution for sub-pixel flow (src/models/backward_warp.cpp).
Declaration rife_declaration() {
  return {.name = "rife",
          .description = "RIFE 4.x frame interpolation (IFNet)",
          .scales = {1},
          .frames_per_call = 2,
          .walk = walk};
}

}  // namespace framelift::arch
