// GFPGAN v1.2-v1.4 ("GFPGANv1Clean"), network in src/models/gfpgan.cpp: one S x S face crop
// (S = face_size, 512 released) through a U-Net of bilinear ResBlocks (a 1x1 in, 3x3s, halving
// to 4x4 and doubling back to S, a 1x1 skip per block), whose bottom also gives the style codes
// (one linear layer) and whose up path gives SFT scale and shift maps (two 3x3 each a level);
// then a StyleGAN2 decoder from a learned 4x4 through two modulated 3x3 convolutions a level
// (the first after a bilinear x2) and a modulated 1x1 to RGB summed over the levels. The style
// MLP is in the weights but not run (the codes are latents already). Per-image work (the style
// linear, the modulations) is counted at the area of one pixel per image. Whole crops only: the
// size multiple is S, the one size the network takes.
#include <algorithm>
#include <cmath>

#include "arch/builtin.h"

namespace framelift::arch {
namespace {

struct Widths {
  double width, multiplier;
  // The decoder's channels at resolution r, as upstream's table: `width` up to 32, then halving
  // from width * multiplier / 2 at 64. The U-Net has half of them.
  double synth(double r) const { return r <= 32 ? width : std::max(1.0, std::floor(width * multiplier / 2 * 64 / r)); }
  double unet(double r) const { return std::max(1.0, std::floor(synth(r) / 2)); }
};

// A bilinear ResBlock from the current tensor to `out` channels at `factor` times its size: two
// 3x3 with the resize between, the input resized and a 1x1 beside them, summed.
void res_block(NetWalk& w, double out, double factor) {
  const double in = w.channels(), area = w.area();
  w.keep();
  w.conv(in, 3);
  w.resize(factor);
  w.conv(out, 3);
  const double out_area = w.area();
  w.keep();
  w.set(in, area);
  w.resize(factor);
  w.conv(out, 1);
  w.pointwise();  // the sum
  w.release(out, out_area);
  w.release(in, area);
}

// A linear layer run once per image: its weights in full, its work at one pixel per image.
void per_image(NetWalk& w, double in, double out, double image_area) {
  const double c = w.channels(), a = w.area();
  w.set(in, image_area);
  w.conv(out, 1);
  w.set(c, a);
}

// A modulated 1x1 to RGB from the current features (kept: the next level runs on them), added to
// the previous level's RGB sum resized x2 where there is one; the new sum is kept.
void to_rgb(NetWalk& w, double f, double pixel, bool previous) {
  const double c = w.channels(), a = w.area();
  per_image(w, f, c, pixel);
  w.keep();
  if (previous) w.extra(3 * a);  // the previous sum, resized
  w.conv(3, 1);
  if (previous) {
    w.pointwise();
    w.release(3, a / 4);
  }
  w.keep();
  w.release(c, a);
  w.set(c, a);
}

ArchCost walk(int, const ArchParams& p) {
  const double face = p.get("face_size", 512), f = p.get("num_style_feat", 512);
  const Widths wd{p.get("width", 512), p.get("channel_multiplier", 2)};
  const bool half = p.get("sft_half", 1) != 0, different = p.get("different_w", 1) != 0;
  const double pixel = 1 / (face * face);  // one pixel of the crop: the per-image layers' area
  int levels = 0;
  for (double r = face; r > 4; r /= 2) ++levels;
  NetWalk w(3);
  w.pointwise();  // (x - 0.5) / 0.5
  w.conv(wd.unet(face), 1);
  for (double r = face; r > 4; r /= 2) {
    res_block(w, wd.unet(r / 2), 0.5);
    w.keep();  // the U-Net skip
  }
  w.conv(wd.unet(4), 3);
  per_image(w, wd.unet(4) * 16, different ? (2 * levels + 2) * f : f, pixel);
  double conditions = 0;
  for (double r = 8; r <= face; r *= 2) {
    w.pointwise();  // + the skip
    w.release(w.channels(), w.area());
    res_block(w, wd.unet(r), 2);
    const double c = w.channels(), a = w.area(), sft = half ? c : 2 * c;
    w.keep();
    for (int i = 0; i < 2; ++i) {  // scale and shift, alive until the decoder uses them
      w.set(c, a);
      w.conv(c, 3);
      w.conv(sft, 3);
      w.keep();
      conditions += sft * a;
    }
    w.release(c, a);
    w.set(c, a);
  }
  // The decoder, each modulated convolution after its modulation (F to its input channels).
  w.set(wd.synth(4), 16 * pixel);
  per_image(w, f, w.channels(), pixel);
  w.conv(wd.synth(4), 3);
  w.pointwise();  // noise, bias, LeakyReLU
  to_rgb(w, f, pixel, false);
  for (double r = 8; r <= face; r *= 2) {
    per_image(w, f, w.channels(), pixel);
    w.resize(2);
    w.conv(wd.synth(r), 3);
    w.pointwise();  // noise, bias, LeakyReLU
    w.pointwise();  // SFT
    per_image(w, f, w.channels(), pixel);
    w.conv(wd.synth(r), 3);
    w.pointwise();
    to_rgb(w, f, pixel, true);
  }
  w.release(conditions, 1);
  w.release(3, 1);
  w.set(3, 1);
  w.pointwise();  // (y + 1) / 2
  return w.finish("gfpgan", 1, 0, int(face), false);
}

}  // namespace

Declaration gfpgan_declaration() {
  return {.name = "gfpgan",
          .description = "GFPGAN v1.2-v1.4 face restoration (U-Net, SFT, StyleGAN2 decoder)",
          .scales = {1},
          .walk = walk,
          .axes = {{"width", "stylegan_decoder.constant_input.weight", 1},
                   {"num_style_feat", "stylegan_decoder.style_conv1.modulated_conv.modulation.weight", 1}},
          .constraints = {positive("width"), positive("num_style_feat"), positive("channel_multiplier"),
                          in_range("face_size", 8, 1024), at_most("num_mlp", 64)}};
}

}  // namespace framelift::arch
