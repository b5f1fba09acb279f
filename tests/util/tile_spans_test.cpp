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
      if (side > tile) {
        EXPECT_GE(2 * shortest, tile) << "a span of less than half a tile";
      }
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

TEST(TileSpans, AlignedSpansAndWindowsStartOnTheGrid) {
  // A window-attention network (8 px windows) partitions a tile's window as it does the whole
  // frame only when the window starts on a multiple of 8: boundaries and context are aligned.
  for (int64_t side : {75, 101, 257, 1080})
    for (int64_t tile : {40, 64, 96}) {
      SCOPED_TRACE(testing::Message() << "side " << side << " tile " << tile);
      const auto spans = tile_spans(side, tile, 20, 8);
      int64_t at = 0;
      for (const TileSpan& s : spans) {
        EXPECT_EQ(s.begin, at);
        EXPECT_GT(s.end, s.begin);
        EXPECT_EQ(s.begin % 8, 0);
        EXPECT_EQ(s.window_begin % 8, 0);
        EXPECT_EQ(s.window_begin, std::max<int64_t>(0, s.begin - 24));  // 20 px of context, rounded up to 24
        EXPECT_EQ(s.window_end, std::min<int64_t>(side, s.end + 24));
        EXPECT_LE(s.end - s.begin, tile + 8);
        at = s.end;
      }
      EXPECT_EQ(at, side);
      if (side > tile) {
        EXPECT_GE(spans.size(), 2u);
      }
    }
  // 101 px in 40 px tiles: three spans cut at 32 and 64 (33.7 and 67.3 rounded to the grid).
  const auto spans = tile_spans(101, 40, 0, 8);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].end, 32);
  EXPECT_EQ(spans[1].end, 64);
  // Unaligned (align 1) is the equal cut: 34 + 34 + 33.
  EXPECT_EQ(tile_spans(101, 40, 0)[0].end, 34);
}

}  // namespace
}  // namespace framelift
