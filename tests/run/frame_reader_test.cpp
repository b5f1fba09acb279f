// One FrameReader for every kind of run (issue 28, item 1): a whole run, a job's segment and a
// profile sample differ only in their InputWindow. The whole run's frames are checked against
// ffmpeg's own decode (framemd5 of the same file: an independent decoder run, not framelift's);
// a segment's and a sample's frames must then be exactly the whole run's frames they cover,
// decoded from the keyframe before them, with their timestamps (a sample's joined).
#include <gtest/gtest.h>

extern "C" {
#include <libavutil/imgutils.h>
#include <libavutil/md5.h>
}

#include <sstream>
#include <string>
#include <vector>

#include "jobs/segment_plan.h"
#include "run/frame_reader.h"
#include "support/test_paths.h"

namespace framelift::pipeline {
namespace {

struct Read {
  std::vector<int64_t> pts;
  std::vector<std::string> md5;
  int64_t frames_in = 0;
  bool limited = false;
  int other_packets = 0;  // of audio, subtitles, ...: what the writer gets to copy
};

// What framemd5 hashes: the planes packed without padding (rawvideo).
std::string md5_of(const AVFrame* f) {
  const auto fmt = AVPixelFormat(f->format);
  std::vector<uint8_t> bytes(size_t(av_image_get_buffer_size(fmt, f->width, f->height, 1)));
  av_image_copy_to_buffer(bytes.data(), int(bytes.size()), f->data, f->linesize, fmt, f->width, f->height, 1);
  uint8_t digest[16];
  av_md5_sum(digest, bytes.data(), int(bytes.size()));
  char hex[33];
  for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", digest[i]);
  return hex;
}

Read read(const std::string& file, InputWindow window) {
  FrameReader reader(file, {});
  reader.start(std::move(window));
  BoundedQueue<media::FramePtr> frames(4096);
  ProgressCounters counters;
  int other = 0;
  reader.run(frames, [&](AVPacket*, AVRational) { ++other; }, counters);
  Read r;
  while (auto f = frames.pop()) {
    r.pts.push_back((*f)->pts);
    r.md5.push_back(md5_of(f->get()));
  }
  r.frames_in = reader.frames_in();
  r.limited = reader.limited();
  EXPECT_EQ(counters.frames_in.load(), r.frames_in);
  if (reader.window().video_only) {
    EXPECT_EQ(other, 0) << "a part of the video copies no other stream";
  }
  r.other_packets = other;
  return r;
}

std::vector<std::string> ffmpeg_frame_md5s(const std::string& file) {
  std::string out;
  EXPECT_EQ(test::run_command("ffmpeg -v error -i '" + file + "' -map 0:v -f framemd5 -", &out), 0) << out;
  std::vector<std::string> md5s;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] != '#') md5s.push_back(line.substr(line.rfind(' ') + 1));
  return md5s;
}

template <class T>
std::vector<T> slice(const std::vector<T>& v, int64_t from, int64_t to) {  // [from, to]
  return std::vector<T>(v.begin() + from, v.begin() + to + 1);
}

TEST(FrameReader, AWholeRunGetsEveryFrameAsAnotherDecoderDecodesIt) {
  for (const char* name : {"real_megamind.mkv", "cfr_8bit.mkv"}) {
    const std::string file = test::media(name).string();
    const Read whole = read(file, whole_input(0));
    EXPECT_EQ(whole.md5, ffmpeg_frame_md5s(file)) << name;
    EXPECT_EQ(whole.frames_in, int64_t(whole.md5.size())) << name;
    EXPECT_FALSE(whole.limited) << name;
    for (size_t i = 1; i < whole.pts.size(); ++i) EXPECT_GT(whole.pts[i], whole.pts[i - 1]) << name;
  }
  EXPECT_GT(read(test::media("cfr_8bit.mkv").string(), whole_input(0)).other_packets, 80) << "its AAC and subtitles";
}

TEST(FrameReader, ASegmentIsItsStretchOfTheWholeRunFromTheKeyframeBefore) {
  const std::string file = test::media("cfr_8bit.mkv").string();  // H.264, a keyframe every 25 frames
  const Read whole = read(file, whole_input(0));
  const jobs::SegmentPlan plan = jobs::plan_segments(file, 20);
  ASSERT_EQ(plan.segments.size(), 3u);
  const int context = 2;
  for (int index = 0; index < 3; ++index) {
    const jobs::Segment& seg = plan.segments[size_t(index)];
    const int64_t from = std::max<int64_t>(0, seg.first_frame - context);
    const int64_t to = std::min<int64_t>(plan.total_frames() - 1, seg.first_frame + seg.frames - 1 + context);
    for (const bool seek : {true, false}) {
      const Read part = read(file, segment_input(plan, index, context, seek, 0));
      EXPECT_EQ(part.md5, slice(whole.md5, from, to)) << "segment " << index << " seek " << seek;
      EXPECT_EQ(part.pts, slice(whole.pts, from, to)) << "segment " << index << " seek " << seek;
      EXPECT_EQ(part.frames_in, seg.frames) << "only the segment's own frames count";
      EXPECT_EQ(part.limited, index < 2) << "stopped at its end, not at the input's";
    }
  }
}

TEST(FrameReader, ASampleIsItsStretchesJoinedAsOneVideo) {
  const std::string file = test::media("cfr_8bit.mkv").string();
  const Read whole = read(file, whole_input(0));
  const jobs::SegmentPlan plan = jobs::plan_segments(file, 20);
  auto stretch = [&](int64_t a, int64_t b) {
    return Stretch{plan.keyframe_at_or_before(plan.frame_pts[size_t(a)]), plan.frame_pts[size_t(a)], plan.frame_pts[size_t(b)]};
  };
  // Out of order, the second from the other keyframe: each is read from its own.
  const Read sample = read(file, sample_input({stretch(30, 34), stretch(5, 8)}, 0));
  std::vector<std::string> expected = slice(whole.md5, 30, 34);
  for (const auto& m : slice(whole.md5, 5, 8)) expected.push_back(m);
  EXPECT_EQ(sample.md5, expected);
  ASSERT_EQ(sample.pts.size(), 9u);
  EXPECT_EQ(slice(sample.pts, 0, 4), slice(whole.pts, 30, 34));
  const int64_t step = whole.pts[1] - whole.pts[0];
  for (size_t i = 5; i < sample.pts.size(); ++i) EXPECT_EQ(sample.pts[i], sample.pts[i - 1] + step) << i;
  EXPECT_TRUE(sample.limited);
}

TEST(FrameReader, MaxFramesStopsAWholeRun) {
  const std::string file = test::media("real_megamind.mkv").string();
  const Read whole = read(file, whole_input(0));
  const Read first = read(file, whole_input(5));
  EXPECT_EQ(first.md5, slice(whole.md5, 0, 4));
  EXPECT_TRUE(first.limited);
}

}  // namespace
}  // namespace framelift::pipeline
