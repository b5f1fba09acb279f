// NAFNet, network in src/models/nafnet.cpp: a U-Net of NAF blocks (1x1 convolutions, a depthwise
// 3x3, gates that halve the channels, a global channel attention). Each level halves the size, so
// the network pads to 2^levels itself (zeros, as upstream): framelift's size multiple is 1, and
// 2^levels is its tile grid instead.
#include "arch/builtin.h"
#include "util/str.h"

namespace framelift::arch {
namespace {

void gate(NetWalk& w) {
  w.set(w.channels() / 2, w.area());  // the product of the two halves
  w.pointwise();
}

void naf_block(NetWalk& w, double c) {
  w.keep();       // x
  w.pointwise();  // norm1
  w.conv(2 * c, 1);
  w.depthwise(3);
  gate(w);
  w.pointwise();  // * the channel attention (its 1x1 runs on one pixel: negligible)
  w.conv(c, 1);
  w.pointwise();  // x + beta * ...
  w.release(c, w.area());
  w.keep();       // y
  w.pointwise();  // norm2
  w.conv(2 * c, 1);
  gate(w);
  w.conv(c, 1);
  w.pointwise();  // y + gamma * ...
  w.release(c, w.area());
}

ArchCost walk(int scale, const ArchParams& p) {
  double c = p.get("width", 32);
  const int levels = int(p.get("levels", 4));
  NetWalk w(3);
  w.keep();  // the input, added to the ending
  w.conv(c, 3);
  for (int i = 0; i < levels; ++i, c *= 2) {
    for (int j = 0; j < int(p.get(str("enc", i), 1)); ++j) naf_block(w, c);
    w.keep();  // the skip
    w.conv(2 * c, 2, 2);
  }
  for (int j = 0; j < int(p.get("middle", 1)); ++j) naf_block(w, c);
  for (int i = 0; i < levels; ++i, c /= 2) {
    w.conv(2 * c, 1);
    w.shuffle(2);
    w.pointwise();  // + skip
    w.release(c / 2, w.area());
    for (int j = 0; j < int(p.get(str("dec", i), 1)); ++j) naf_block(w, c / 2);
  }
  w.conv(3, 3);
  w.pointwise();  // + input
  w.release(3, 1);
  // The channel attention's mean spans the whole tile, so no context makes tiles exact; 32 px is
  // what the convolutions need, and what is left is the attention's (docs/models.md).
  ArchCost cost = w.finish("nafnet", scale, 32, 1);
  cost.tile_grid = 1 << levels;  // tiles on the whole frame's grid of 2^levels
  return cost;
}

// Each level doubles the channels (width * 2^levels at the bottom) and the frame is padded to
// 2^levels; blocks per stage are counted off key names. 8 levels: twice upstream's 4.
std::vector<Constraint> nafnet_constraints() {
  std::vector<Constraint> c = {positive("width"), positive("levels"), at_most("levels", 8), at_most("middle", kMaxBlocks)};
  for (int i = 0; i < 8; ++i) {
    c.push_back(at_most(str("enc", i), kMaxBlocks));
    c.push_back(at_most(str("dec", i), kMaxBlocks));
  }
  return c;
}

}  // namespace

Declaration nafnet_declaration() {
  return {.name = "nafnet", .description = "NAFNet (nonlinear-activation-free U-Net: SIDD denoising, GoPro/REDS deblurring)",
          .scales = {1},
          .walk = walk,
          .axes = {{"width", "intro.weight", 0}, {"in_channels", "intro.weight", 1}, {"out_channels", "ending.weight", 0}},
          .constraints = nafnet_constraints()};
}

}  // namespace framelift::arch
