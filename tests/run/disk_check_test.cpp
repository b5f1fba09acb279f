// What is left of a job on disk: the segments still to write (sized by the finished ones once there
// are any, by the forecast before), the output where this process assembles it, held against the
// free space of the file systems they go to (real tmpfs mounts): one sum on one file system, the
// tighter of two otherwise.
#include "run/disk_check.h"

#include <gtest/gtest.h>

#include "support/small_disk.h"

namespace fs = std::filesystem;

namespace framelift::pipeline {
namespace {

// Four segments of 10 input frames; the input's other streams hold 1000 bytes.
jobs::SegmentPlan four_segments() {
  jobs::SegmentPlan p;
  for (int i = 0; i < 4; ++i) p.segments.push_back({i, 10 * i, 10});
  p.other_stream_bytes = 1000;
  return p;
}

jobs::SegmentRecord record(int index, int64_t bytes, int64_t frames_out) {
  jobs::SegmentRecord r;
  r.index = index;
  r.bytes = bytes;
  r.frames_out = frames_out;
  return r;
}

TEST(DiskCheck, TheForecastSizesTheJobUntilASegmentIsFinished) {
  const DiskForecast forecast{100, 2};  // 100 bytes a frame, interpolated to twice the frames
  const DiskNeed before = disk_need(four_segments(), {}, forecast, {}, true);
  EXPECT_TRUE(before.known);
  EXPECT_FALSE(before.measured);
  EXPECT_DOUBLE_EQ(before.segments_bytes, 4 * 10 * 2 * 100);
  EXPECT_DOUBLE_EQ(before.output_bytes, 4 * 10 * 2 * 100 + 1000);
  // One finished segment of 20 frames in 3000 bytes: 150 a frame for the other three.
  const DiskNeed after = disk_need(four_segments(), {{0, record(0, 3000, 20)}}, forecast, {}, true);
  EXPECT_TRUE(after.measured);
  EXPECT_DOUBLE_EQ(after.segments_bytes, 3 * 20 * 150);
  EXPECT_DOUBLE_EQ(after.output_bytes, 3000 + 3 * 20 * 150 + 1000);
  // Neither a forecast nor a finished segment: nothing to say.
  EXPECT_FALSE(disk_need(four_segments(), {}, {}, {}, true).known);
}

TEST(DiskCheck, AShardWorkerNeedsItsOwnSegmentsAndNoOutput) {
  jobs::SegmentSelection second_half;
  second_half.shard = 1;
  second_half.shards = 2;
  const DiskNeed need = disk_need(four_segments(), {}, DiskForecast{100, 1}, second_half, false);
  EXPECT_DOUBLE_EQ(need.segments_bytes, 2 * 10 * 100);
  EXPECT_DOUBLE_EQ(need.output_bytes, 0);
}

TEST(DiskCheck, OneFileSystemIsOneSumAndTwoAreHeldApart) {
  test::SmallDisk one("check-one", 1 << 20), other("check-other", 4 << 20);
  if (!one.available() || !other.available()) GTEST_SKIP() << one.why();
  DiskNeed need;
  need.known = true;
  need.segments_bytes = 600'000;
  need.output_bytes = 600'000;
  // Both on the 1 MiB disk: 1.2 MB does not fit, named by the output's folder.
  const DiskCheck same = check_disk(need, one.dir() / "out.mkv.framelift-job", one.dir() / "out.mkv");
  EXPECT_EQ(same.folder, one.dir().string());
  EXPECT_DOUBLE_EQ(same.needed_bytes, 1'200'000);
  EXPECT_DOUBLE_EQ(same.free_bytes, 1 << 20);
  EXPECT_DOUBLE_EQ(same.short_by(), 1'200'000 - (1 << 20));
  EXPECT_EQ(describe(same), one.dir().string() + " has 1.0 MB free; the job needs about 1.2 MB more (600 kB of segments, 600 kB of output)");
  // The output on the 4 MiB disk: each part fits where it goes.
  const DiskCheck apart = check_disk(need, one.dir() / "job", other.dir() / "out.mkv");
  EXPECT_DOUBLE_EQ(apart.short_by(), 0);
  // The segments on the small one beyond its room: that one is named.
  need.segments_bytes = 2'000'000;
  const DiskCheck tight = check_disk(need, one.dir() / "job", other.dir() / "out.mkv");
  EXPECT_EQ(tight.folder, (one.dir() / "job").string());
  EXPECT_DOUBLE_EQ(tight.short_by(), 2'000'000 - (1 << 20));
}

}  // namespace
}  // namespace framelift::pipeline
