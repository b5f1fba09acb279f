// DRUNet (the DPIR denoiser), network in src/models/drunet.cpp: a four-level U-Net of residual
// blocks with 2x2 stride-2 convolutions down and transposed convolutions up, fed the image and a
// noise-level plane. Inputs are padded to 8 (three halvings).
#include <array>

#include "arch/builtin.h"
#include "util/str.h"

namespace framelift::arch {

void kair_res_blocks(NetWalk& w, double c, int nb) {
  for (int i = 0; i < nb; ++i) {
    w.keep();  // x, for x + res(x)
    w.conv(c, 3);
    w.pointwise();  // relu
    w.conv(c, 3);
    w.pointwise();  // + x
    w.release(c, w.area());
  }
}

namespace {

ArchCost walk(int scale, const ArchParams& p) {
  std::array<double, 4> nc;
  for (int i = 0; i < 4; ++i) nc[size_t(i)] = p.get(str("nc", i), 64 << i);
  const int nb = int(p.get("nb", 4));
  NetWalk w(3);
  w.concat(4);  // the image and the noise plane
  w.conv(nc[0], 3);
  std::array<double, 4> areas{};
  for (int i = 0; i < 3; ++i) {
    w.keep();  // this level's input, the skip on the way up
    areas[size_t(i)] = w.area();
    kair_res_blocks(w, nc[size_t(i)], nb);
    w.conv(nc[size_t(i) + 1], 2, 2);
  }
  w.keep();
  areas[3] = w.area();
  kair_res_blocks(w, nc[3], nb);
  for (int i = 2; i >= 0; --i) {
    w.pointwise();  // + skip
    w.release(nc[size_t(i) + 1], areas[size_t(i) + 1]);
    w.deconv(nc[size_t(i)], 2, 2);
    kair_res_blocks(w, nc[size_t(i)], nb);
  }
  w.pointwise();  // + skip
  w.release(nc[0], areas[0]);
  w.conv(3, 3);
  // The receptive field spans well over a hundred pixels (7 x nb blocks, four of them groups at 1/8
  // resolution), but what reaches far is weak: 32 px of context keep tiled output within 50 dB of
  // whole frames (tests/models/arch_drunet_test.cpp).
  return w.finish("drunet", scale, 32, 8);
}

}  // namespace

Declaration drunet_declaration() {
  return {.name = "drunet",
          .description = "DRUNet (DPIR denoiser, noise level as an input plane)",
          .scales = {1},
          .walk = walk,
          .axes = {{"nc0", "m_head.weight", 0},
                   {"in_channels", "m_head.weight", 1},  // plus the noise-level plane
                   {"nc1", "m_down2.0.res.0.weight", 0},
                   {"nc2", "m_down3.0.res.0.weight", 0},
                   {"nc3", "m_body.0.res.0.weight", 0},
                   {"out_channels", "m_tail.weight", 0}},
          // nb residual blocks per level, counted off key names.
          .constraints = {positive("nc0"), positive("nc1"), positive("nc2"), positive("nc3"), positive("nb"),
                          at_most("nb", kMaxBlocks)}};
}

}  // namespace framelift::arch
