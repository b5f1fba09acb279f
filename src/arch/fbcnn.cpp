// FBCNN, network in src/models/fbcnn.cpp: DRUNet's four-level U-Net with biases, a second stack of
// blocks at the bottom (one for the decoder, one that predicts the JPEG quality, whose MLPs run on
// one vector per image: negligible per pixel), and up blocks modulated by the predicted quality.
// It replicate-pads to 8 itself: framelift's size multiple is 1, and 8 is its tile grid instead.
#include <array>

#include "arch/builtin.h"
#include "util/str.h"

namespace framelift::arch {
namespace {

ArchCost walk(int scale, const ArchParams& p) {
  std::array<double, 4> nc;
  for (int i = 0; i < 4; ++i) nc[size_t(i)] = p.get(str("nc", i), 64 << i);
  const int nb = int(p.get("nb", 4));
  NetWalk w(3);
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
  kair_res_blocks(w, nc[3], nb);  // encoder
  w.keep();                       // its output feeds both stacks
  kair_res_blocks(w, nc[3], nb);  // quality prediction
  w.set(nc[3], areas[3]);
  kair_res_blocks(w, nc[3], nb);  // decoder
  w.release(nc[3], areas[3]);
  for (int i = 2; i >= 0; --i) {
    w.pointwise();  // + skip
    w.release(nc[size_t(i) + 1], areas[size_t(i) + 1]);
    w.deconv(nc[size_t(i)], 2, 2);
    for (int b = 0; b < nb; ++b) {
      kair_res_blocks(w, nc[size_t(i)], 1);
      w.pointwise();  // gamma * res + beta: one more pass than a plain block
    }
  }
  w.pointwise();  // + skip
  w.release(nc[0], areas[0]);
  w.conv(3, 3);
  // As DRUNet's (src/arch/drunet.cpp); the quality prediction's mean spans the whole tile, so
  // tiles are conditioned on slightly different qualities whatever the context (docs/models.md).
  ArchCost cost = w.finish("fbcnn", scale, 32, 1);
  cost.tile_grid = 8;  // tiles on the whole frame's grid of three halvings
  return cost;
}

}  // namespace

Declaration fbcnn_declaration() {
  return {.name = "fbcnn",
          .description = "FBCNN (flexible blind JPEG artifact removal, predicts the quality factor)",
          .scales = {1},
          .walk = walk,
          .axes = {{"nc0", "m_head.weight", 0},
                   {"in_channels", "m_head.weight", 1},
                   {"nc1", "m_down2.0.res.0.weight", 0},
                   {"nc2", "m_down3.0.res.0.weight", 0},
                   {"nc3", "m_body_encoder.0.res.0.weight", 0},
                   {"out_channels", "m_tail.weight", 0},
                   {"qf_hidden", "qf_embed.0.weight", 0}},
          // nb residual blocks per level, counted off key names.
          .constraints = {positive("nc0"), positive("nc1"), positive("nc2"), positive("nc3"), positive("nb"),
                          at_most("nb", kMaxBlocks), positive("qf_hidden")}};
}

}  // namespace framelift::arch
