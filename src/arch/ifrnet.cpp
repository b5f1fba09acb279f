// IFRNet frame interpolation, network in src/models/ifrnet.cpp: an encoder pyramid (1/2 .. 1/16,
// two convolutions a level) over both frames, then four decoders coarse to fine (a convolution, a
// ResBlock whose second and fourth convolutions see only its side channels, a stride-2
// deconvolution), the features warped at every level and both frames at the end. Widths from the
// checkpoint (c1..c4, k1, d1..d4, s1..s4; missing ones take IFRNet base's). Costs are per
// interpolated frame, per pixel of the padded frame; the whole frame goes through at once.
#include <string>

#include "arch/builtin.h"

namespace framelift::arch {
namespace {

constexpr double kBase[4] = {32, 48, 72, 96};

double width(const ArchParams& p, const char* name, int level, double fallback) {
  return p.get(name + std::to_string(level), fallback);
}

// A convolution and its PReLU.
void conv_relu(NetWalk& w, double out, int k, int stride = 1) {
  w.conv(out, k, stride);
  w.pointwise();
}

// Upstream's ResBlock on `c` channels, `side` of them reworked alone twice.
void res_block(NetWalk& w, double c, double side) {
  const double area = w.area();
  w.keep();
  conv_relu(w, c, 3);
  w.set(side, area);
  conv_relu(w, side, 3);
  w.concat(c);
  conv_relu(w, c, 3);
  w.set(side, area);
  conv_relu(w, side, 3);
  w.concat(c);
  w.conv(c, 3);
  w.pointwise();  // + x
  w.pointwise();  // PReLU
  w.release(c, area);
}

ArchCost walk(const ArchParams& p) {
  double c[4], d[4], s[4];
  for (int l = 0; l < 4; ++l) {
    c[l] = width(p, "c", l + 1, kBase[l]);
    d[l] = width(p, "d", l + 1, l == 3 ? 2 * c[l] : 3 * c[l]);
    s[l] = width(p, "s", l + 1, 32);
  }
  // Both frames through the encoder as one tensor of twice the area: twice the work, the weights once.
  NetWalk w(3);
  w.set(3, 2);
  for (int l = 0; l < 4; ++l) {
    conv_relu(w, c[l], l == 0 ? int(p.get("k1", 3)) : 3, 2);
    conv_relu(w, c[l], 3);
    w.keep();  // each level's features, read by its decoder
  }
  w.extra(2 * 4 + 3);  // both flows, the mean-free frames' warps at the end
  for (int l = 3; l >= 0; --l) {
    const double area = 1.0 / double(1 << (2 * (l + 1)));
    if (l < 3) {
      w.set(c[l], area);
      w.pointwise();  // warp f0
      w.pointwise();  // warp f1
    }
    w.set(l == 3 ? 2 * c[l] + 1 : 3 * c[l] + 4, area);
    w.concat(w.channels());
    conv_relu(w, d[l], 3);
    res_block(w, d[l], s[l]);
    w.deconv(l == 0 ? 8 : 4 + c[l - 1], 4, 2);
    if (l < 3) {
      w.set(4, area);
      w.resize(2);  // the flows from below, upsampled and added
      w.pointwise();
    }
  }
  w.set(3, 1);
  for (int i = 0; i < 5; ++i) w.pointwise();  // two warps, the blend, the residual, the clamp
  return w.finish("ifrnet", 1, 0, 16, false);
}

}  // namespace

// The per-call cost is RIFE's (interpolator_declaration), not measured for IFRNet.
Declaration ifrnet_declaration() { return interpolator_declaration("ifrnet", "IFRNet frame interpolation (S, base, L)", walk); }

}  // namespace framelift::arch
