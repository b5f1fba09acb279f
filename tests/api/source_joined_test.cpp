// The library's Source over a stream that changes mid-way (two MPEG-TS recordings joined with
// `cat`, the second larger and its clock started again): it gives what `run` gives, every frame
// at the first size, timestamps going forward one frame step apart, instead of frames a
// Pipeline configured for shape() cannot take and timestamps that repeat.
#include <gtest/gtest.h>

#include <framelift/framelift.h>

#include "support/joined_clips.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {

TEST(SourceJoined, FramesOfANewSizeComeAtTheFirstSizeAndTimeGoesOn) {
  const auto dir = temp_dir("source-joined");
  const auto in = joined(dir, ts_clip(dir, "a", "64x48", 0), ts_clip(dir, "b", "96x64", 5));
  framelift::Source source(in.string());
  const framelift::VideoShape& shape = source.shape();
  ASSERT_EQ(shape.width, 64);
  ASSERT_EQ(shape.height, 48);
  const double tick = double(shape.time_base_num) / shape.time_base_den;
  std::vector<framelift::Frame> frames;
  while (auto f = source.read()) frames.push_back(std::move(*f));
  ASSERT_EQ(frames.size(), size_t(2 * kJoinedFramesEach));
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(frames[i].width, 64) << "frame " << i;
    EXPECT_EQ(frames[i].height, 48) << "frame " << i;
    if (i == 0) continue;
    const double step = double(frames[i].pts - frames[i - 1].pts) * tick;
    EXPECT_GT(step, 0.5 / kJoinedRate) << "frame " << i;
    EXPECT_LT(step, 1.5 / kJoinedRate) << "frame " << i;
  }
  // The fitted part: the picture in the middle rows, black bars above (3:2 inside 4:3).
  const framelift::Frame& late = frames[kJoinedFramesEach + 3];
  for (int x = 0; x < 64; ++x) EXPECT_LT(late.at(1, x, 0), 0.06f) << "column " << x;  // black, but for chroma upsampling at the bar edge
  float middle = 0;
  for (int x = 0; x < 64; ++x) middle += late.at(1, x, 24);
  EXPECT_GT(middle / 64, 0.05f) << "the picture itself is there";
}

}  // namespace
}  // namespace framelift::test
