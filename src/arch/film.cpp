// FILM frame interpolation, network in src/models/film.cpp: per frame an image pyramid and the
// shared sub-level extractor run on every level (the bulk of its work at full resolution), flow
// pyramids in both directions (a predictor per level on both frames' cascaded features), the fused
// levels' pixels and features warped, and a U-Net decoder. Widths from the checkpoint (filters,
// sub_levels, pyramid_levels, fusion_levels, flow_convs_k, flow_filters_k; missing ones take
// film_net's). Costs are per interpolated frame, per pixel of the padded frame.
#include <algorithm>
#include <string>
#include <vector>

#include "arch/builtin.h"

namespace framelift::arch {
namespace {

constexpr double kFlowConvs[4] = {3, 3, 3, 3}, kFlowFilters[4] = {32, 64, 128, 256};

double area_of(int level) { return 1.0 / double(1 << (2 * level)); }

ArchCost walk(const ArchParams& p) {
  const double f = p.get("filters", 64);
  const int subs = std::clamp(int(p.get("sub_levels", 4)), 1, 10), levels = std::clamp(int(p.get("pyramid_levels", 7)), 1, 12);
  const int fused = std::clamp(int(p.get("fusion_levels", subs + 1)), 1, levels);
  const auto feature = [&](int level) { return f * double((2 << std::min(level, subs - 1)) - 1); };
  const auto flow_param = [&](const char* name, int k, const double* fallback) {
    return p.get(std::string(name) + std::to_string(k), fallback[std::min(k, 3)]);
  };
  NetWalk w(3);
  // Weights shared across levels, frames and directions are counted at their first use.
  std::vector<bool> counted(size_t(subs) * 3, false);  // two convolutions per sub-level, then the predictors
  const auto conv = [&](size_t id, double out, int k) {
    if (counted[id]) return w.reused_conv(out, k);
    counted[id] = true;
    w.conv(out, k);
  };
  // Both frames: every pyramid level through the sub-levels it has room for (twice the work).
  for (int m = 0; m < levels; ++m)
    for (int j = 0; j < std::min(levels - m, subs); ++j) {
      w.set(j == 0 ? 3 : f * double(1 << (j - 1)), 2 * area_of(m + j));
      conv(size_t(2 * j), f * double(1 << j), 3);
      conv(size_t(2 * j + 1), f * double(1 << j), 3);
      w.keep();
    }
  // Two flow pyramids: at each level the other frame's features warped, then the predictor
  // (level i's own below S - 1, the shared one above).
  for (int direction = 0; direction < 2; ++direction)
    for (int i = levels - 1; i >= 0; --i) {
      const int k = std::min(i, subs - 1);
      const double width = flow_param("flow_filters_", k, kFlowFilters);
      const bool first = !counted[size_t(2 * subs + k)];
      counted[size_t(2 * subs + k)] = true;
      w.set(feature(i), area_of(i));
      if (i < levels - 1) w.pointwise();  // the warp
      w.set(2 * feature(i), area_of(i));
      w.concat(2 * feature(i));
      for (int c = 0; c < int(flow_param("flow_convs_", k, kFlowConvs)); ++c) first ? w.conv(width, 3) : w.reused_conv(width, 3);
      first ? w.conv(width / 2, 1) : w.reused_conv(width / 2, 1);
      first ? w.conv(2, 1) : w.reused_conv(2, 1);
      w.keep();
    }
  // The fused levels: both frames' pixels and features warped, then the decoder, coarse to fine.
  for (int i = 0; i < fused; ++i) {
    w.set(2 * (feature(i) + 3), area_of(i));
    w.pointwise();
    w.keep();
  }
  w.set(2 * (feature(fused - 1) + 3) + 4, area_of(fused - 1));
  for (int i = fused - 2; i >= 0; --i) {
    w.resize(2);
    w.conv(f * double(1 << i), 2);
    w.concat(2 * (feature(i) + 3) + 4 + f * double(1 << i));
    w.conv(f * double(1 << i), 3);
    w.conv(f * double(1 << i), 3);
  }
  w.conv(3, 1);
  return w.finish("film", 1, 0, 1 << (levels - 1), false);
}

}  // namespace

// The per-call cost is RIFE's (interpolator_declaration), not measured for FILM.
Declaration film_declaration() { return interpolator_declaration("film", "FILM frame interpolation (film_net)", walk); }

}  // namespace framelift::arch
