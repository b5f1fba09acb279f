// util::tile_spans: equal spans that cover the axis once, in order, each window its span plus the
// context clipped at the edges; lengths within a pixel of each other, so none under half a tile.
#include <gtest/gtest.h>

#include "util/tile_spans.h"

namespace framelift {
namespace {

TEST(TileSpans, CoverTheAxisOnceWithEqualSpansAndClippedContext) {
  for (int64_t side : {1, 63, 64, 65, 100, 140, 257, 1080, 1920, 3841})
    for (int64_t tile : {16, 64, 96, 512}) {
      SCOPED_TRACE(testing::Message() << "side " << side << " tile " << tile);
      const auto spans = tile_spans(side, tile, 16);
      ASSERT_FALSE(spans.empty());
      int64_t at = 0, longest = 0, shortest = side;
      for (const TileSpan& s : spans) {
        EXPECT_EQ(s.begin, at);
        EXPECT_LE(s.end - s.begin, tile);
        EXPECT_EQ(s.window_begin, std::max<int64_t>(0, s.begin - 16));
        EXPECT_EQ(s.window_end, std::min<int64_t>(side, s.end + 16));
        longest = std::max(longest, s.end - s.begin);
        shortest = std::min(shortest, s.end - s.begin);
        at = s.end;
      }
      EXPECT_EQ(at, side);
      EXPECT_LE(longest - shortest, 1) << "spans of unequal length";
      if (side > tile) EXPECT_GE(2 * shortest, tile) << "a span of less than half a tile";
      EXPECT_EQ(int64_t(spans.size()), side > tile ? (side + tile - 1) / tile : 1);
    }
}

TEST(TileSpans, ARemainderOfAFewPixelsIsSharedOutNotLeftAlone) {
  // 140 px in 64 px tiles: 47 + 47 + 46 (once 64 + 64 + 12, whose 28 px window a CUNet refused).
  const auto spans = tile_spans(140, 64, 16);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].end, 47);
  EXPECT_EQ(spans[1].end, 94);
  EXPECT_EQ(spans[2].window_end - spans[2].window_begin, 62);
  EXPECT_EQ(tile_spans(140, 0, 16).size(), 1u);
  EXPECT_EQ(tile_spans(140, 140, 16).size(), 1u);
}

}  // namespace
}  // namespace framelift
