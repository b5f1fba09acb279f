// MAT (mask-aware transformer inpainting), network in src/models/mat.cpp: a first stage (partial
// convolutions down to 64x64, a U-shaped stack of window-attention layers 64 -> 16 -> 64 over the
// valid tokens, style-modulated convolutions back up to a coarse fill) and a second stage
// (a convolutional encoder from the composite to 16x16, a StyleGAN2-style decoder of modulated
// 3x3 convolutions and 1x1 to-RGB layers back to the full size). The 4x4 low-pass filters around
// every resampling are counted as depthwise convolutions. The synthesis is one fixed size (the
// weights say which: 512 for the releases): size multiple R, untiled.
#include <cmath>
#include <string>

#include "arch/builtin.h"

namespace framelift::arch {
namespace {

constexpr int kHeads = 6;

// Upstream's released stage layout of the first stage's transformer: token map side, window.
constexpr double kTokenSide[5] = {64, 32, 16, 32, 64};
constexpr double kWindow[5] = {8, 16, 16, 16, 8};
constexpr int kReleasedDepths[5] = {2, 3, 4, 3, 2};

// "w512", "d0": appended rather than "w" + std::to_string(n), which GCC 12 warns about (-Wrestrict).
std::string key(const char* prefix, long n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}

void swin_block(NetWalk& w, double dim, double mlp, double window) {
  const double a = w.area();
  w.keep();
  w.pointwise();  // the L2-normalised tokens for q and k
  w.conv(3 * dim, 1);
  w.attention(window * window, kHeads);
  w.conv(dim, 1);
  w.concat(2 * dim);  // the block's input beside the attention's output
  w.release(dim, a);
  w.conv(dim, 1);  // fuse
  w.pointwise();   // leaky ReLU
  w.conv(mlp, 1);
  w.pointwise();
  w.conv(dim, 1);
}

// A 3x3 with its 4x4 low-pass filter: stride 2 down (filter first), or up (transposed, filter after).
void down_conv(NetWalk& w, double out) {
  w.depthwise(4);
  w.conv(out, 3, 2);
  w.pointwise();
}

void up_conv(NetWalk& w, double out) {
  w.deconv(out, 3, 2);
  w.depthwise(4);
  w.pointwise();
}

ArchCost walk(int, const ArchParams& p) {
  const double r = p.get("resolution", 512), dim = p.get("dim", 180), mlp = p.get("mlp", 2 * dim);
  const int res_log2 = int(std::lround(std::log2(r)));
  const auto nf = [&](int l) { return p.get(key("w", 1L << l), l <= 6 ? 512.0 : 512.0 * 64 / (1 << l)); };
  const double token_area = [&] {
    const double s = 64 / r;
    return s * s;
  }();
  NetWalk w(4);
  w.pointwise();  // [-1, 1] and the kept pixels' mask
  w.pointwise();  // the mask beside the masked image
  // First stage: partial convolutions (a mask sum and a ratio each) down to 64x64.
  w.conv(dim, 3);
  w.pointwise();
  for (double side = r; side > 64; side /= 2) {
    w.keep();  // the skip its style block adds back
    down_conv(w, dim);
  }
  for (int s = 0; s < 5; ++s) {
    const double area = token_area * (kTokenSide[s] / 64) * (kTokenSide[s] / 64);
    if (s == 1 || s == 2) down_conv(w, dim);
    if (s > 2) up_conv(w, dim);
    w.set(dim, area);
    const double depth = p.get(key("d", s), kReleasedDepths[s]);
    residual(w, [&] {
      for (int b = 0; b < int(depth); ++b) swin_block(w, dim, mlp, std::min(kWindow[s], kTokenSide[s]));
      w.conv(dim, 3);
    });
    if (s < 2) w.keep();  // the token skips of the U
    if (s > 2) {
      w.pointwise();
      w.release(dim, area);
    }
  }
  for (double side = 64; side < r; side *= 2) {
    up_conv(w, dim);  // modulated, demodulated
    w.pointwise();    // + the encoder's skip
    w.release(dim, w.area());
    w.conv(dim, 3);
    w.pointwise();
    w.keep();
    w.conv(3, 1);  // to RGB, plus the coarser image upsampled
    w.pointwise();
    w.release(dim, w.area());
  }
  w.pointwise();  // the coarse fill composited
  // Second stage: the encoder from the composite and the mask (7 channels) to 16x16.
  w.set(7, 1);
  w.concat(7);
  w.conv(nf(res_log2), 1);
  w.conv(nf(res_log2), 3);
  for (int l = res_log2 - 1; l >= 4; --l) {
    w.keep();  // each level's feature, added back in the decoder
    down_conv(w, nf(l));
    w.conv(nf(l), 3);
  }
  w.conv(nf(4), 3);
  w.pointwise();  // + the encoder's 16x16
  w.conv(nf(4), 3);
  for (int l = 5; l <= res_log2; ++l) {
    up_conv(w, nf(l));
    w.pointwise();
    w.release(nf(l), w.area());
    w.conv(nf(l), 3);
    w.pointwise();
    w.keep();
    w.conv(3, 1);
    w.pointwise();
    w.release(nf(l), w.area());
  }
  w.set(3, 1);
  w.pointwise();  // composited into the frame, [0, 1]
  return w.finish("mat", 1, 0, int(r), false);
}

}  // namespace

Declaration mat_declaration() {
  std::vector<Constraint> constraints = {in_range("resolution", 128, 4096), positive("dim"), multiple_of("dim", kHeads),
                                         positive("mlp"), positive("z_dim"), positive("w_dim"), positive("style"),
                                         in_range("mapping", 1, 64)};
  for (int s = 0; s < 5; ++s) constraints.push_back(in_range(key("d", s), 1, kMaxBlocks));
  for (int res = 16; res <= 4096; res *= 2) constraints.push_back(positive(key("w", res)));
  return {.name = "mat",
          .description = "MAT inpainting (mask-aware transformer, StyleGAN2 decoder; fixed size)",
          .scales = {1},
          .walk = walk,
          .axes = {{"dim", "synthesis.first_stage.conv_first.conv.weight", 0},
                   {"z_dim", "mapping.fc0.weight", 1},
                   {"w_dim", "mapping.fc0.weight", 0},
                   {"mlp", "synthesis.first_stage.tran.0.blocks.0.mlp.fc1.weight", 0},
                   {"style", "synthesis.to_style.fc.weight", 0}},
          .constraints = constraints};
}

}  // namespace framelift::arch
