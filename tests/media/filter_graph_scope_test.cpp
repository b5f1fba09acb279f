// media::whole_video_reason: which filter graphs a job may cut into segments. Every graph that
// counts, drops or retimes frames from the start of the video is named with its filter; per-frame
// and bounded-temporal graphs are cut. (tests/hostile/segmented_filters_test.cpp checks the
// consequence: a job's output equals a --no-job run's.)
#include <gtest/gtest.h>

#include "media/filter_graph_scope.h"

namespace framelift::media {
namespace {

TEST(FilterGraphScope, PerFrameAndBoundedTemporalGraphsAreCut) {
  for (const char* graph : {"crop=iw-8:ih-8,unsharp", "scale=w=iw/2:h=-2", "hue=h=t*10", "eq=contrast=1.2",
                            "hqdn3d=4", "nlmeans", "bwdif=mode=send_field", "tmix=frames=3", "null"})
    EXPECT_EQ(whole_video_reason(graph), "") << graph;
}

TEST(FilterGraphScope, FrameCountingFiltersNeedTheWholeVideo) {
  for (const char* name : {"select", "trim", "fps", "framestep", "decimate", "mpdecimate", "fade", "setpts", "loop",
                           "reverse", "tpad", "minterpolate", "framerate", "thumbnail"}) {
    const std::string graph = std::string(name) + (std::string(name) == "select" ? "=gte(n\\,5)" : "");
    const std::string why = whole_video_reason(graph);
    EXPECT_EQ(why.rfind(name, 0), 0u) << graph << ": " << why;
  }
}

TEST(FilterGraphScope, AFilterNotKnownToBePerFrameNeedsTheWholeVideo) {
  // blend is per-frame, but framelift has no word on it: leaving it uncut costs speed, never output.
  EXPECT_NE(whole_video_reason("split[a][b];[a][b]blend=all_mode=average"), "");
}

TEST(FilterGraphScope, ExpressionsReadingTheFrameCounterNeedTheWholeVideo) {
  EXPECT_EQ(whole_video_reason("hue=h=n*10"), "hue's h reads the frame counter 'n'");
  EXPECT_EQ(whole_video_reason("crop=w=iw-8:h=ih-8:x=mod(n\\,8)"), "crop's x reads the frame counter 'n'");
  EXPECT_EQ(whole_video_reason("geq=lum='N*2':cb=128:cr=128"), "geq's lum_expr reads the frame counter 'N'");
  EXPECT_EQ(whole_video_reason("unsharp=enable='lt(n\\,10)'"), "unsharp's enable reads the frame counter 'n'");
  // Timestamps are the frames' own in every segment: t and pts are not counters.
  EXPECT_EQ(whole_video_reason("unsharp=enable='lt(t\\,1)'"), "");
  EXPECT_EQ(whole_video_reason("scale=w=in_w/2:h=-2"), "");
}

TEST(FilterGraphScope, AGraphLibavfilterCannotParseIsLeftToTheStage) {
  EXPECT_EQ(whole_video_reason("nosuchfilter"), "");
  EXPECT_EQ(whole_video_reason(""), "");
}

}  // namespace
}  // namespace framelift::media
