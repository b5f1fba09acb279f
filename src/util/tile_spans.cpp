#include "util/tile_spans.h"

#include <algorithm>

namespace framelift {

std::vector<TileSpan> tile_spans(int64_t side, int64_t tile, int64_t overlap) {
  if (side <= 0) return {};
  if (tile <= 0 || tile >= side) return {{0, side, 0, side}};
  // n spans of side / n pixels, the first (side % n) of them one longer.
  const int64_t n = (side + tile - 1) / tile, base = side / n, longer = side % n;
  std::vector<TileSpan> spans;
  for (int64_t i = 0, begin = 0; i < n; ++i) {
    const int64_t end = begin + base + (i < longer ? 1 : 0);
    spans.push_back({begin, end, std::max<int64_t>(0, begin - overlap), std::min(side, end + overlap)});
    begin = end;
  }
  return spans;
}

}  // namespace framelift
