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

}  // namespace
}  // namespace framelift::test
