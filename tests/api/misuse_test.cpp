// The public API used wrongly, as a caller's bug would: every case is a framelift::Error of the
// kind the headers state, one line, and never a crash, std::bad_alloc or a silently wrong frame.
#include <gtest/gtest.h>

#include <framelift/framelift.h>

#include <climits>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/test_paths.h"

namespace framelift::test {
namespace {
namespace fs = std::filesystem;

// The message of the Error(kind) `call` throws; a failure (and "") when it throws nothing else.
std::string error_of(ErrorKind kind, const std::function<void()>& call) {
  try {
    call();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    return e.what();
  }
  return "";
}

void expect_moved_from(const std::string& class_name, const char* function, const std::function<void()>& call) {
  SCOPED_TRACE(class_name + "::" + function);
  EXPECT_EQ(error_of(ErrorKind::Usage, call), "framelift::" + class_name + ": used after being moved from");
}

VideoShape small_shape() {
  VideoShape s;
  s.width = 8;
  s.height = 6;
  s.frame_rate_num = 25;
  return s;
}

Frame small_frame() { return Frame{8, 6, 0, std::vector<float>(3 * 8 * 6, 0.5f)}; }

TEST(ApiMisuse, EveryFunctionOfAMovedFromPipelineIsAUsageError) {
  Pipeline p("resize:scale=2");
  Pipeline taken(std::move(p));
  expect_moved_from("Pipeline", "configure", [&] { p.configure(small_shape()); });
  expect_moved_from("Pipeline", "send", [&] { p.send(small_frame()); });
  expect_moved_from("Pipeline", "receive", [&] { p.receive(); });
  expect_moved_from("Pipeline", "flush", [&] { p.flush(); });
  expect_moved_from("Pipeline", "reset", [&] { p.reset(); });
  expect_moved_from("Pipeline", "stages", [&] { p.stages(); });

  // The state went with the move; assigning to the moved-from one makes it usable again.
  EXPECT_EQ(taken.configure(small_shape()).width, 16);
  p = Pipeline("resize:scale=3");
  EXPECT_EQ(p.configure(small_shape()).width, 24);
  Pipeline assigned("");
  assigned = std::move(taken);
  expect_moved_from("Pipeline", "send after a move assignment", [&] { taken.send(small_frame()); });
  assigned.send(small_frame());
  ASSERT_TRUE(assigned.receive().has_value());
}

TEST(ApiMisuse, EveryFunctionOfAMovedFromSourceIsAUsageError) {
  Source s(media("real_megamind.mkv").string(), {.max_frames = 2});
  Source taken(std::move(s));
  expect_moved_from("Source", "shape", [&] { s.shape(); });
  expect_moved_from("Source", "read", [&] { s.read(); });
  expect_moved_from("Source", "decode_errors", [&] { s.decode_errors(); });
  EXPECT_EQ(taken.shape().width, 720);
  EXPECT_TRUE(taken.read().has_value());
  s = std::move(taken);
  EXPECT_TRUE(s.read().has_value());
  EXPECT_FALSE(s.read().has_value());  // max_frames = 2, one read before the move
}

TEST(ApiMisuse, EveryFunctionOfAMovedFromSinkIsAUsageError) {
  const fs::path out = temp_dir("api-misuse-sink") / "moved.mkv";
  Sink s(out.string(), small_shape(), {.codec = "ffv1"});
  Sink taken(std::move(s));
  expect_moved_from("Sink", "write", [&] { s.write(small_frame()); });
  expect_moved_from("Sink", "close", [&] { s.close(); });
  // The file being written went with the move.
  taken.write(small_frame());
  EXPECT_EQ(taken.close(), 1);
  EXPECT_TRUE(fs::exists(out));
}

// Sizes a caller can pass by mistake: refused before any allocation or read of `pixels` (a few
// bytes here), as the resource error they are, whatever their products overflow.
TEST(ApiMisuse, FramesTooLargeToHoldAreResourceErrors) {
  const std::vector<uint8_t> pixels(64);
  struct Case {
    int width, height;
  } cases[] = {
      {65536, 65536},            // 48 GiB of floats
      {16385, 16384},            // one column past the limit
      {1000000000, 1000000000},  // 12 bytes a pixel overflows int64
      {INT_MAX, INT_MAX},        // ... and size_t
      {INT_MAX, 1},              // and 3 x width overflows int
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.width) + "x" + std::to_string(c.height));
    const std::string size = std::to_string(c.width) + "x" + std::to_string(c.height);
    const std::string why = error_of(ErrorKind::Resource, [&] { from_rgb24(pixels.data(), c.width, c.height, INT_MAX, 0); });
    EXPECT_EQ(why.rfind("from_rgb24: a " + size + " frame needs ", 0), 0u) << why;
    EXPECT_NE(why.find("frames are limited to 268435456 pixels (16384x16384)"), std::string::npos) << why;
  }
  EXPECT_EQ(exit_code(ErrorKind::Resource), 6);
  EXPECT_EQ(kMaxFramePixels, int64_t(16384) * 16384);
  // Within the limit the size is not the problem; a stride that cannot be is.
  error_of(ErrorKind::Usage, [&] { from_rgb24(pixels.data(), 4, 4, 11, 0); });
  EXPECT_EQ(from_rgb24(pixels.data(), 4, 4, 12, 7).rgb.size(), 48u);
}

// start_s values that are no time, or no time the clip's timestamps can hold, are refused naming
// the option; a start past the clip's last frame is the documented Input error, never frame 0.
TEST(ApiMisuse, SourceStartThatIsNoTimeOrPastTheEnd) {
  const std::string clip = media("real_megamind.mkv").string();  // 48 frames, 42 ms to 2 s
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double start : {nan, -1.0, inf, -inf}) {
    SCOPED_TRACE(start);
    const std::string why = error_of(ErrorKind::Usage, [&] { Source s(clip, {.start_s = start}); });
    EXPECT_EQ(why.rfind("Source: start_s=", 0), 0u) << why;
    EXPECT_NE(why.find("is not a time (seconds, finite, >= 0)"), std::string::npos) << why;
  }
  // Checked before the file is opened: the option is the problem, not the missing file.
  error_of(ErrorKind::Usage, [&] { Source s("/no/such/clip.mkv", {.start_s = nan}); });
  error_of(ErrorKind::Usage, [&] { Source s(clip, {.max_frames = -1}); });

  for (double start : {1e300, 1e16}) {  // 1e16 s is 1e19 ticks of Matroska's milliseconds
    SCOPED_TRACE(start);
    const std::string why = error_of(ErrorKind::Usage, [&] { Source s(clip, {.start_s = start}); });
    EXPECT_EQ(why.rfind("Source: start_s=", 0), 0u) << why;
    EXPECT_NE(why.find("is past what the timestamps of " + clip + " can hold (time base 1/1000 s)"), std::string::npos)
        << why;
  }

  for (double start : {2.5, 1e9}) {
    SCOPED_TRACE(start);
    const std::string why = error_of(ErrorKind::Input, [&] { Source s(clip, {.start_s = start}); });
    EXPECT_EQ(why.rfind(clip + ": no video frames at or after ", 0), 0u) << why;
  }
  // The last frame (1.96 s) is still there.
  Source last(clip, {.start_s = 1.96});
  EXPECT_EQ(last.shape().start_pts, 2002);
  ASSERT_TRUE(last.read().has_value());
  EXPECT_FALSE(last.read().has_value());
}

}  // namespace
}  // namespace framelift::test
