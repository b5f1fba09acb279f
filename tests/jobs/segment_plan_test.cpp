// Segment plans on real encoded video (made here with the ffmpeg CLI): every frame in exactly
// one segment, boundaries moved to keyframes when one is near, the plan survives JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "jobs/segment_plan.h"
#include "util/error.h"
#include "support/test_paths.h"

namespace framelift::jobs {
namespace {

// 100 frames at 25 fps, H.264 with B-frames and a keyframe every 20 frames exactly.
std::filesystem::path gop20_clip() {
  static const std::filesystem::path clip = [] {
    auto p = test::temp_dir("plan") / "gop20.mp4";
    EXPECT_EQ(test::run_command("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=96x64:rate=25 -frames:v 100 "
                                "-c:v libx264 -preset ultrafast -bf 2 -g 20 -keyint_min 20 -sc_threshold 0 '" +
                                p.string() + "'"),
              0);
    return p;
  }();
  return clip;
}

void expect_covers(const SegmentPlan& plan, int64_t frames) {
  ASSERT_EQ(plan.total_frames(), frames);
  int64_t next = 0;
  for (const Segment& s : plan.segments) {
    EXPECT_EQ(s.first_frame, next);
    EXPECT_GT(s.frames, 0);
    next += s.frames;
  }
  EXPECT_EQ(next, frames);
  EXPECT_TRUE(std::is_sorted(plan.frame_pts.begin(), plan.frame_pts.end()));
}

TEST(SegmentPlan, BoundariesMoveToNearbyKeyframes) {
  SegmentPlan plan = plan_segments(gop20_clip().string(), 18);
  expect_covers(plan, 100);
  ASSERT_EQ(plan.keyframe_pts.size(), 5u);
  std::vector<int64_t> starts;
  for (const Segment& s : plan.segments) starts.push_back(s.first_frame);
  EXPECT_EQ(starts, (std::vector<int64_t>{0, 20, 40, 60, 80}));
  for (const Segment& s : plan.segments)
    EXPECT_TRUE(std::binary_search(plan.keyframe_pts.begin(), plan.keyframe_pts.end(), plan.frame_pts[size_t(s.first_frame)]));
}

TEST(SegmentPlan, ShortSegmentsBetweenKeyframesAndAMergedTail) {
  SegmentPlan plan = plan_segments(gop20_clip().string(), 7);
  expect_covers(plan, 100);
  // No segment longer than 7 + 7/4, none shorter than a quarter except where a keyframe pulled it.
  for (const Segment& s : plan.segments) EXPECT_LE(s.frames, 7 + 1 + 7) << "segment " << s.index;
  EXPECT_GE(plan.segments.size(), 12u);
  // The seek point of a mid-GOP segment is the keyframe before it.
  const Segment& s = plan.segments[3];
  const int64_t key = plan.keyframe_at_or_before(plan.frame_pts[size_t(s.first_frame)]);
  EXPECT_LE(key, plan.frame_pts[size_t(s.first_frame)]);
  EXPECT_TRUE(std::binary_search(plan.keyframe_pts.begin(), plan.keyframe_pts.end(), key));
}

TEST(SegmentPlan, DefaultIsAboutTenSecondsAndMaxFramesTruncates) {
  SegmentPlan whole = plan_segments(gop20_clip().string(), 0);
  expect_covers(whole, 100);
  EXPECT_EQ(whole.segments.size(), 1u) << "4 s of video is one default segment";
  SegmentPlan sample = plan_segments(gop20_clip().string(), 10, 35);
  expect_covers(sample, 35);
}

TEST(SegmentPlan, RoundTripsThroughJson) {
  SegmentPlan plan = plan_segments(gop20_clip().string(), 18);
  SegmentPlan back = plan_from_json(nlohmann::json::parse(to_json(plan).dump()));
  EXPECT_EQ(back.frame_pts, plan.frame_pts);
  EXPECT_EQ(back.keyframe_pts, plan.keyframe_pts);
  ASSERT_EQ(back.segments.size(), plan.segments.size());
  for (size_t i = 0; i < plan.segments.size(); ++i) {
    EXPECT_EQ(back.segments[i].first_frame, plan.segments[i].first_frame);
    EXPECT_EQ(back.segments[i].frames, plan.segments[i].frames);
    EXPECT_EQ(back.segments[i].index, int(i));
  }
  EXPECT_EQ(back.time_base.num, plan.time_base.num);
  EXPECT_EQ(back.time_base.den, plan.time_base.den);
}

// The plan counts each other stream's packets (what assembly must copy again); ffprobe counts
// them independently. A plan written before the count reads back without one (no check then).
TEST(SegmentPlan, CountsTheOtherStreamsPacketsAndKeepsThemInJson) {
  const auto clip = test::temp_dir("plan-av") / "av.mkv";
  ASSERT_EQ(test::run_command("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=96x64:rate=25 -f lavfi -i "
                              "sine=sample_rate=48000 -t 2 -c:v libx264 -preset ultrafast -c:a aac '" + clip.string() + "'"),
            0);
  std::string counted;
  ASSERT_EQ(test::run_command("ffprobe -v error -select_streams a -count_packets -show_entries stream=nb_read_packets "
                              "-of csv=p=0 '" + clip.string() + "'", &counted),
            0);
  const SegmentPlan plan = plan_segments(clip.string(), 0);
  ASSERT_TRUE(plan.other_packets.has_value());
  EXPECT_EQ(*plan.other_packets, (std::map<int, int64_t>{{1, std::stoll(counted)}}));
  const SegmentPlan back = plan_from_json(nlohmann::json::parse(to_json(plan).dump()));
  EXPECT_EQ(back.other_packets, plan.other_packets);
  nlohmann::json old = to_json(plan);
  old.erase("other_packets");
  old.erase("seal");
  EXPECT_FALSE(plan_from_json(old).other_packets.has_value());
}

TEST(SegmentPlan, NotMediaIsAClearError) {
  auto bad = test::temp_dir("plan-bad") / "x.mkv";
  ASSERT_EQ(test::run_command("echo nothing > '" + bad.string() + "'"), 0);
  EXPECT_THROW(plan_segments(bad.string(), 10), std::exception);
}

}  // namespace
TEST(SegmentPlan, DamagedPlansAreRefusedNamingTheFile) {
  const nlohmann::json good = to_json(plan_segments(gop20_clip().string(), 18));
  ASSERT_GE(good.at("segments").size(), 3u);
  auto refused = [](nlohmann::json j, bool reseal, const std::string& problem) {
    if (reseal) j.erase("seal");  // as a plan written before seals existed: the content checks decide
    try {
      plan_from_json(j, "/jobs/x/plan.json");
      ADD_FAILURE() << "accepted a plan with " << problem;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input);
      EXPECT_NE(std::string(e.what()).find("/jobs/x/plan.json: damaged ("), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << e.what();
    }
  };
  nlohmann::json j = good;
  j["frame_pts"][3] = 123456789;  // a jumping timestamp, seal kept
  refused(j, false, "does not match its seal");
  j = good;
  j["time_base"] = {1, 0};
  refused(j, true, "time base 1/0");
  j = good;
  j["segments"].erase(j["segments"].size() - 1);  // fewer segments than the video
  refused(j, true, "the segments cover");
  j = good;
  j["segments"][1][0] = 0;  // overlapping segments
  refused(j, true, "segment 1 does not follow");
  j = good;
  j.erase("keyframe_pts");
  refused(j, true, "unreadable");
  j = good;
  j.erase("seal");
  EXPECT_NO_THROW(plan_from_json(j, "old/plan.json")) << "plans from before seals still load";
}

}  // namespace framelift::jobs
