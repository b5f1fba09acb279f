// GMFSS union frame interpolation, network in src/models/gmfss.cpp and gmflow.cpp: per pair of
// frames AnimeInterp's features of both (full size), GMFlow both ways on the half-size frames (a
// CNN backbone, a transformer in windows at 1/16 and 1/8 of the frame, global then local matching,
// propagation, convex upsampling) and MetricNet; per frame at t RIFE 4.6's IFNet at half size,
// softmax splatting at three scales and a GridNet. Widths from the checkpoint (flow_dimK,
// flow_features, flow_layers, flow_ffn, flow_upsampler, ifnetK, metric, featuresK, gridK; missing
// ones take the released model's). Costs are per interpolated frame (the pair's share counted
// whole: one frame per pair is the common case), per pixel of the padded frame. The attention
// windows hold a 1920x1088 frame's tokens: they grow with the frame, which a per-pixel cost cannot.
#include <string>

#include "arch/builtin.h"

namespace framelift::arch {
namespace {

constexpr double kTokensCoarse = 1920.0 * 1088 / (16 * 16);  // GMFlow's 1/8 of the half-size frame
constexpr double kWindowsCoarse = 2 * 2, kWindowsFine = 8 * 8;
constexpr double kIfnet[4] = {192, 128, 96, 64};

// A PReLU, 3x3, PReLU, 3x3 block of AnimeInterp (+ the skip it is summed into).
void prelu_block(NetWalk& w, double out, int stride = 1) {
  w.pointwise();
  w.conv(out, 3, stride);
  w.pointwise();
  w.conv(out, 3);
}

void transformer_layer(NetWalk& w, double c, double area, double tokens, double ffn, bool cross) {
  w.set(c, area);
  w.conv(3 * c, 1);  // q, k, v (no biases: counted as one, near enough)
  w.attention(tokens, 1);
  w.conv(c, 1);      // merge
  w.pointwise();     // norm
  if (cross) {
    w.concat(2 * c);
    w.conv(ffn, 1);
    w.pointwise();
    w.conv(c, 1);
    w.pointwise();
  }
  w.pointwise();     // + source
}

ArchCost walk(const ArchParams& p) {
  const double d[3] = {p.get("flow_dim0", 64), p.get("flow_dim1", 96), p.get("flow_dim2", 128)};
  const double c = p.get("flow_features", 128), ffn = p.get("flow_ffn", 8 * c), up = p.get("flow_upsampler", 256);
  const int layers = int(p.get("flow_layers", 6));
  const double f[3] = {p.get("features0", 32), p.get("features1", 64), p.get("features2", 96)};
  const double g[3] = {p.get("grid0", 32), p.get("grid1", 64), p.get("grid2", 96)};
  const double metric = p.get("metric", 64);
  NetWalk w(3);
  // AnimeInterp's features of both frames.
  w.set(3, 2);
  for (int k = 0; k < 3; ++k) {
    w.conv(f[k], 3, 2);
    w.pointwise();
    w.conv(f[k], 3);
    w.pointwise();
    w.keep();
  }
  // GMFlow, both directions in one batch: four half-size frames (area 1 in all).
  w.set(3, 1);
  w.conv(d[0], 7, 2);
  double in = d[0];
  for (int l = 0; l < 3; ++l) {
    const int stride = l == 1 ? 2 : 1;
    residual(w, [&] {
      w.conv(d[l], 3, stride);
      w.pointwise();
      w.conv(d[l], 3);
      w.pointwise();
    });
    if (stride != 1 || in != d[l]) w.conv(d[l], 1);  // the shortcut's 1x1 (priced on the block's output)
    residual(w, [&] {
      w.conv(d[l], 3);
      w.conv(d[l], 3);
    });
    in = d[l];
  }
  w.conv(c, 1);
  const double fine = w.area();
  w.keep();
  w.conv(c, 3);  // the trident at stride 1
  w.keep();
  w.set(c, fine);
  w.reused_conv(c, 3, 2);  // and at stride 2
  const double coarse = w.area();
  for (const auto& [area, windows] : {std::pair{coarse, kWindowsCoarse}, std::pair{fine, kWindowsFine}}) {
    const double tokens = kTokensCoarse * (area == fine ? 4 : 1) / windows;
    for (int i = 0; i < layers; ++i) {
      const bool first = area == coarse;
      if (first) {
        transformer_layer(w, c, area, tokens, ffn, false);
        transformer_layer(w, c, area, tokens, ffn, true);
      } else {  // the same weights again
        w.set(c, area);
        for (int k = 0; k < 2; ++k) {
          w.reused_conv(3 * c, 1);
          w.attention(tokens, 1);
          w.reused_conv(c, 1);
        }
        w.concat(2 * c);
        w.reused_conv(ffn, 1);
        w.reused_conv(c, 1);
      }
    }
    // Matching (global: every coarse token; local: 81 neighbours), then propagation.
    w.set(3 * c, area);
    w.attention(area == coarse ? kTokensCoarse : 81, 1);
    w.set(c, area);
    area == coarse ? w.conv(2 * c, 1) : w.reused_conv(2 * c, 1);
    w.attention(area == coarse ? kTokensCoarse : 9, 1);
  }
  w.set(c + 2, fine);
  w.conv(up, 3);
  w.conv(9 * 16, 1);
  w.set(2, 1);  // the flows at half size, both ways
  w.keep();
  // MetricNet at half size (warps, occlusion check, three convolutions).
  w.set(14, 0.25);
  w.conv(metric, 3);
  w.conv(metric, 3);
  w.conv(2, 3);
  w.keep();
  // IFNet at half size, its blocks at 1/8 .. 1 of that.
  for (int i = 0; i < 4; ++i) {
    const double width = p.get("ifnet" + std::to_string(i), kIfnet[i]), scale = double(8 >> i);
    w.set(i == 0 ? 7 : 12, 0.25 / (scale * scale));
    w.conv(width / 2, 3, 2);
    w.conv(width, 3, 2);
    for (int j = 0; j < 8; ++j) w.conv(width, 3);
    w.deconv(24, 4, 2);
    w.shuffle(2);
    w.resize(scale);
    w.set(6, 0.25);
    w.pointwise();  // the warps
  }
  // Splatting both frames and the three feature scales, then the GridNet.
  w.set(2 * (3 + f[0]) + 2, 0.25);
  w.pointwise();
  w.set(2 * f[1] + 2, 0.25 / 4);
  w.pointwise();
  w.set(2 * f[2] + 2, 0.25 / 16);
  w.pointwise();
  const double area[3] = {0.25, 0.25 / 4, 0.25 / 16};
  const double heads[5][2] = {{6, 0}, {2 * f[0], 0}, {3, 0}, {2 * f[1], 1}, {2 * f[2], 2}};
  for (const auto& [channels, row] : heads) {
    w.set(channels, area[int(row)]);
    prelu_block(w, g[int(row)]);
    w.keep();
  }
  for (int row = 0; row < 3; ++row)
    for (int k = 0; k < 3; ++k) {
      w.set(g[row], area[row]);
      prelu_block(w, g[row]);
      w.keep();
    }
  for (int k = 0; k < 2; ++k)
    for (int row = 0; row < 2; ++row) {
      w.set(g[row], area[row]);
      prelu_block(w, g[row + 1], 2);
      w.set(g[row + 1], area[row + 1]);
      w.resize(2);
      prelu_block(w, g[row]);
    }
  w.set(g[0], 0.25);
  w.conv(g[0], 3);
  w.pointwise();
  w.conv(4 * g[0], 3);
  w.shuffle(2);
  w.conv(3, 3);
  return w.finish("gmfss", 1, 0, 64, false);
}

}  // namespace

// The per-call cost is RIFE's (interpolator_declaration), not measured for GMFSS.
Declaration gmfss_declaration() {
  Declaration d = interpolator_declaration("gmfss", "GMFSS union frame interpolation (GMFlow, RIFE, softmax splatting)", walk);
  // fp32 only: in bf16 the seeded reference's frame is 22-23 dB from fp32 (RIFE's and IFRNet's
  // hold 40 dB and more), and no released weights are here to show it is the seeding.
  d.precisions = {Precision::Fp32};
  return d;
}

}  // namespace framelift::arch
