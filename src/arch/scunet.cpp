// SCUNet, network in src/models/scunet.cpp: a U-Net of four levels whose blocks split their
// channels between a residual pair of 3x3 convolutions and a Swin layer (8 x 8 window attention
// with c / head_dim heads, then a 4x MLP), merged by a 1x1. Upstream reflect-pads to 64 (three
// halvings of 8 px windows), framelift's size multiple.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

constexpr const char* kStacks[] = {"m_down1", "m_down2", "m_down3", "m_body", "m_up3", "m_up2", "m_up1"};

// One Swin-Conv block on 2h channels (h per half).
void swin_conv_block(NetWalk& w, double h, int heads) {
  residual(w, [&] {
    const double a = w.area();
    w.conv(2 * h, 1);  // the split
    w.keep();          // both halves stay alive until the merge
    w.set(h, a);
    residual(w, [&] {
      w.conv(h, 3);
      w.pointwise();  // relu
      w.conv(h, 3);
    });
    w.keep();  // the convolution half, waiting for the concatenation
    w.set(h, a);
    residual(w, [&] {
      w.pointwise();  // layer norm (and the roll of a shifted block)
      w.conv(3 * h, 1);
      w.attention(64, heads);
      w.conv(h, 1);
    });
    residual(w, [&] {
      w.pointwise();  // layer norm
      w.conv(4 * h, 1);
      w.pointwise();  // gelu
      w.conv(h, 1);
    });
    w.concat(2 * h);
    w.release(h, a);
    w.release(2 * h, a);
    w.conv(2 * h, 1);  // the merge
  });
}

void stack(NetWalk& w, const ArchParams& p, int i, double c, double head_dim) {
  for (int j = 0; j < int(p.get(kStacks[i], 4)); ++j) swin_conv_block(w, c / 2, int(c / 2 / head_dim));
}

ArchCost walk(int scale, const ArchParams& p) {
  const double dim = p.get("dim", 64), head_dim = p.get("head_dim", 32);
  double areas[4];
  NetWalk w(3);
  w.conv(dim, 3);
  for (int i = 0; i < 3; ++i) {
    w.keep();  // this level's input, the skip on the way up
    areas[i] = w.area();
    stack(w, p, i, dim * (1 << i), head_dim);
    w.conv(2 * dim * (1 << i), 2, 2);
  }
  w.keep();
  areas[3] = w.area();
  stack(w, p, 3, 8 * dim, head_dim);
  for (int i = 2; i >= 0; --i) {
    w.pointwise();  // + skip
    w.release(2 * dim * (1 << i), areas[i + 1]);
    w.deconv(dim * (1 << i), 2, 2);
    stack(w, p, 6 - i, dim * (1 << i), head_dim);
  }
  w.pointwise();  // + skip
  w.release(dim, areas[0]);
  w.conv(3, 3);
  // Every shifted block reaches a window further, 64 px a block at 1/8; what reaches that far is
  // weak: 64 px of context (one grid step) keep tiled output within 50 dB of whole frames on the
  // committed references (92 dB measured, 36 dB without context: tests/models/arch_scunet_test.cpp).
  return w.finish("scunet", scale, 64, 64);
}

}  // namespace

Declaration scunet_declaration() {
  return {.name = "scunet", .description = "SCUNet (Swin-Conv U-Net: blind denoising of real footage)", .scales = {1}, .walk = walk,
          .axes = {{"dim", "m_head.0.weight", 0}, {"heads", "m_body.0.trans_block.msa.relative_position_params", 0}},
          // heads: the bottom level's (4 dim transformer channels), read by detection only; head_dim,
          // 4 dim / heads, then splits every level's transformer half (dim / 2 at the top).
          .constraints = {positive("dim"), positive("heads"), divides("heads", "dim", 4), positive("head_dim"),
                          divides("head_dim", "dim", 0.5), at_most("m_down1", kMaxBlocks), at_most("m_down2", kMaxBlocks),
                          at_most("m_down3", kMaxBlocks), at_most("m_body", kMaxBlocks), at_most("m_up3", kMaxBlocks),
                          at_most("m_up2", kMaxBlocks), at_most("m_up1", kMaxBlocks)}};
}

}  // namespace framelift::arch
