#include "util/tile_spans.h"

#include <algorithm>

namespace framelift {

std::vector<TileSpan> tile_spans(int64_t side, int64_t tile, int64_t overlap, int64_t align) {
  if (side <= 0) return {};
  if (tile <= 0 || tile >= side) return {{0, side, 0, side}};
  const int64_t n = (side + tile - 1) / tile, a = std::max<int64_t>(1, align);
  // Boundary i of n equal spans is i * side / n (the first side % n spans one pixel longer when
  // a = 1); with a > 1, the multiple of a nearest to it.
  auto boundary = [&](int64_t i) {
    if (a == 1) return i * (side / n) + std::min(i, side % n);
    return (i * side + n * a / 2) / (n * a) * a;
  };
  const int64_t context = (std::max<int64_t>(0, overlap) + a - 1) / a * a;
  std::vector<TileSpan> spans;
  for (int64_t i = 0, begin = 0; i < n; ++i) {
    const int64_t end = i + 1 == n ? side : boundary(i + 1);
    if (end <= begin) continue;  // spans narrower than align: neighbours take their pixels
    spans.push_back({begin, end, std::max<int64_t>(0, begin - context), std::min(side, end + context)});
    begin = end;
  }
  return spans;
}

}  // namespace framelift
