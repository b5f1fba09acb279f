// media::FilterGraph on synthetic float frames: the output format is known before any frame,
// timestamps come back in the reported time base, temporal filters give back what they hold on
// flush, and rejected graphs are one-line usage errors.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "media/av_error.h"
#include "media/filter_graph.h"
#include "util/error.h"

namespace framelift::media {
namespace {

VideoFormat float_format() {
  VideoFormat f;
  f.width = 64;
  f.height = 48;
  f.pix_fmt = AV_PIX_FMT_GBRPF32;
  f.time_base = {1, 1000};
  f.frame_rate = {25, 1};
  f.start_pts = 40;
  return f;
}

FramePtr pattern_frame(const VideoFormat& f, int64_t pts) {
  FramePtr frame = make_frame();
  frame->format = f.pix_fmt;
  frame->width = f.width;
  frame->height = f.height;
  check(av_frame_get_buffer(frame.get(), 0), ErrorKind::Resource, "test frame");
  for (int p = 0; p < 3; ++p)
    for (int y = 0; y < f.height; ++y)
      for (int x = 0; x < f.width; ++x)
        reinterpret_cast<float*>(frame->data[p] + y * frame->linesize[p])[x] = float((x + 3 * y + int(pts)) % 11) / 11;
  frame->pts = pts;
  return frame;
}

// Pushes frames at 40 ms steps from 40; returns the output timestamps (flush included).
std::vector<int64_t> run(FilterGraph& graph, const VideoFormat& in, int frames, std::vector<FramePtr>* kept = nullptr) {
  std::vector<int64_t> pts;
  auto sink = [&](FramePtr f) {
    pts.push_back(f->pts);
    if (kept) kept->push_back(std::move(f));
  };
  for (int k = 0; k < frames; ++k) {
    graph.push(pattern_frame(in, 40 + 40 * k));
    graph.pull(sink);
  }
  graph.flush(sink);
  return pts;
}

TEST(FilterGraph, ReportsSizeBeforeTheFirstFrameAndKeepsTimestamps) {
  const VideoFormat in = float_format();
  FilterGraph graph(in, "crop=iw-8:ih-6,unsharp", "stage filter", {AV_PIX_FMT_GBRPF32});
  const VideoFormat out = graph.output_format(in);
  EXPECT_EQ(out.width, 56);
  EXPECT_EQ(out.height, 42);
  EXPECT_EQ(out.pix_fmt, AV_PIX_FMT_GBRPF32);
  EXPECT_EQ(av_cmp_q(out.time_base, in.time_base), 0);
  EXPECT_EQ(out.start_pts, 40);
  std::vector<FramePtr> frames;
  EXPECT_EQ(run(graph, in, 4, &frames), (std::vector<int64_t>{40, 80, 120, 160}));
  for (const auto& f : frames) EXPECT_EQ(f->width, 56);
}

TEST(FilterGraph, NullGraphIsExact) {
  const VideoFormat in = float_format();
  FilterGraph graph(in, "null", "test", {AV_PIX_FMT_GBRPF32});
  std::vector<FramePtr> frames;
  run(graph, in, 2, &frames);
  ASSERT_EQ(frames.size(), 2u);
  FramePtr expected = pattern_frame(in, 40);
  for (int p = 0; p < 3; ++p)
    for (int y = 0; y < in.height; ++y)
      ASSERT_EQ(0, std::memcmp(frames[0]->data[p] + y * frames[0]->linesize[p],
                               expected->data[p] + y * expected->linesize[p], in.width * sizeof(float)));
}

TEST(FilterGraph, FieldRateDeinterlacingDoublesRateWithTimesFromTheInput) {
  // bwdif has no float path: libavfilter converts to 16-bit RGB and back on its own.
  const VideoFormat in = float_format();
  FilterGraph graph(in, "bwdif=mode=send_field:parity=tff:deint=all", "stage deinterlace", {AV_PIX_FMT_GBRPF32});
  const VideoFormat out = graph.output_format(in);
  EXPECT_EQ(av_cmp_q(out.time_base, AVRational{1, 2000}), 0);
  EXPECT_EQ(av_cmp_q(out.frame_rate, AVRational{50, 1}), 0);
  EXPECT_EQ(out.start_pts, 80);
  // Field 1 of frame k at 2 * pts, field 2 half way to the next frame; the last one extrapolated.
  EXPECT_EQ(run(graph, in, 4), (std::vector<int64_t>{80, 120, 160, 200, 240, 280, 320, 360}));
}

TEST(FilterGraph, RejectedGraphsAreOneLineUsageErrors) {
  const VideoFormat in = float_format();
  for (const auto& [graph, message] : std::vector<std::pair<std::string, std::string>>{
           {"nosuch=1", "stage filter: bad filter graph 'nosuch=1': no filter named 'nosuch'"},
           {"null,crop=2:2,frobnicate", "no filter named 'frobnicate'"},
           {"scale=w=abc", "stage filter: bad filter graph 'scale=w=abc': "},
           {"split", "stage filter: bad filter graph 'split'"},
           {"", "stage filter: the filter graph is empty"}}) {
    try {
      FilterGraph g(in, graph, "stage filter");
      FAIL() << "accepted " << graph;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << graph;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace framelift::media
