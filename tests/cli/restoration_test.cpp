// The libavfilter stages end to end: `deinterlace` on a clip woven from real progressive frames,
// progressive input left alone, field mode's doubled rate and timestamps, segment boundaries;
// `filter` changing the size for later stages, 1:1 graphs keeping every timestamp, bad graphs.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {

void ff(const std::string& args) {
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y " + args), 0) << args;
}

// 20 consecutive frames of the real footage at 320x240, retimed to 50 fps: each frame stands for
// one field's moment of a 25 fps interlaced camera. The woven clip takes its top field (even
// lines) from frame 2k and its bottom field from frame 2k+1, without vertical low-pass, and says
// so: top field first, in the frame flags and the container's field order.
struct WovenClip {
  std::filesystem::path progressive, even_frames, woven;
};

WovenClip woven_clip(const std::filesystem::path& dir) {
  WovenClip c{dir / "progressive50.mkv", dir / "even25.mkv", dir / "woven25i.mkv"};
  ff("-i " + shell_quote(media("real_megamind.mkv")) + " -vf \"scale=320:240,setpts=N/50/TB\" -r 50 -frames:v 20 "
     "-c:v ffv1 -pix_fmt yuv420p -an " + shell_quote(c.progressive));
  ff("-i " + shell_quote(c.progressive) + " -vf \"select=not(mod(n\\,2)),setpts=N/25/TB\" -r 25 -c:v ffv1 " +
     shell_quote(c.even_frames));
  ff("-i " + shell_quote(c.progressive) + " -vf interlace=scan=tff:lowpass=off -c:v ffv1 -field_order tt " +
     shell_quote(c.woven));
  return c;
}

std::vector<double> frame_times(const std::filesystem::path& file) {
  std::vector<double> t;
  for (const auto& f : framemd5(file, "0:v", false)) t.push_back(f.pts_s);
  return t;
}

std::vector<std::string> frame_md5s(const std::filesystem::path& file) {
  std::vector<std::string> m;
  for (const auto& f : framemd5(file, "0:v", false)) m.push_back(f.md5);
  return m;
}

CliResult run(const std::filesystem::path& in, const std::filesystem::path& out, const std::string& pipeline,
              const std::string& extra = "") {
  return framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " -y -c ffv1 --progress none --pipeline \"" +
                   pipeline + "\" " + extra);
}

TEST(Deinterlace, FieldModeRestoresWovenRealFramesAtDoubleRate) {
  auto dir = temp_dir("deint-field");
  auto clip = woven_clip(dir);
  ASSERT_EQ(count_frames(clip.woven), 10);
  auto out = dir / "field.mkv";
  auto r = run(clip.woven, out, "deinterlace:mode=field");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("interlaced, top field first"), std::string::npos) << r.output;
  // One frame per field, at the time the field was shot: k / 50 s.
  auto t = frame_times(out);
  ASSERT_EQ(t.size(), 20u);
  for (size_t k = 0; k < t.size(); ++k) EXPECT_NEAR(t[k], k / 50.0, 1e-3) << "frame " << k;
  EXPECT_EQ(ffprobe(out)["streams"][0]["avg_frame_rate"], "50/1");
  // Each output frame against the progressive frame its field came from. Measured: 43.6 dB,
  // as the ffmpeg CLI's bwdif on the same frames (43.6 dB).
  const double psnr = video_psnr(clip.progressive, out);
  // After another stage the deinterlacer gets RGB frames, whose 4:2:0 chroma the conversion has
  // blended across the fields. Measured: 41.8 dB.
  auto rgb = dir / "field-rgb.mkv";
  ASSERT_EQ(run(clip.woven, rgb, "filter:graph=null,deinterlace:mode=field").exit_code, 0);
  EXPECT_EQ(frame_times(rgb), t);
  const double psnr_rgb = video_psnr(clip.progressive, rgb);
  std::printf("deinterlace field mode vs the progressive frames: %.2f dB on decoded frames, %.2f dB in RGB\n", psnr,
              psnr_rgb);
  EXPECT_GT(psnr, 42.5);
  EXPECT_GT(psnr_rgb, 40.5);
  EXPECT_GT(psnr, psnr_rgb + 1.0);
}

TEST(Deinterlace, FrameModeBeatsTheWeaveAndKeepsTheRate) {
  auto dir = temp_dir("deint-frame");
  auto clip = woven_clip(dir);
  auto out = dir / "frame.mkv";
  auto r = run(clip.woven, out, "deinterlace");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto t = frame_times(out), in_t = frame_times(clip.woven);
  ASSERT_EQ(t.size(), 10u);
  EXPECT_EQ(t, in_t);
  // Frame k is rebuilt from its top field, taken from progressive frame 2k. The woven frame itself
  // (combing wherever there is motion) is the baseline it must beat clearly. Measured: 44.3 dB,
  // the woven frames 27.7 dB.
  const double psnr = video_psnr(clip.even_frames, out), woven = video_psnr(clip.even_frames, clip.woven);
  std::printf("deinterlace frame mode vs the first fields' frames: %.2f dB (woven input: %.2f dB)\n", psnr, woven);
  EXPECT_GT(psnr, 37.0);
  EXPECT_GT(psnr, woven + 3.0);
}

// The output says what it is: progressive after deinterlacing (both modes, whole runs and jobs
// of segments), so players and later tools do not deinterlace it again; the source's field order
// when no stage deinterlaces.
TEST(Deinterlace, OutputFieldOrderIsProgressiveAfterDeinterlacingAndTheSourcesOtherwise) {
  auto dir = temp_dir("deint-field-order");
  auto clip = woven_clip(dir);
  ASSERT_EQ(ffprobe(clip.woven)["streams"][0].value("field_order", ""), "tt");
  struct Case {
    std::string name, pipeline, extra, field_order;
  };
  for (const Case& c : {Case{"frame", "deinterlace", "--no-job", "progressive"},
                        Case{"field", "deinterlace:mode=field", "--no-job", "progressive"},
                        Case{"field-job", "deinterlace:mode=field", "--segment-frames 4", "progressive"},
                        Case{"upscaled", "deinterlace,resize:scale=2", "--segment-frames 4", "progressive"},
                        Case{"kept", "filter:graph=null", "--no-job", "tt"},
                        Case{"kept-job", "filter:graph=null", "--segment-frames 4", "tt"}}) {
    auto out = dir / (c.name + ".mkv");
    auto r = run(clip.woven, out, c.pipeline, c.extra);
    ASSERT_EQ(r.exit_code, 0) << c.name << ": " << r.output;
    EXPECT_EQ(ffprobe(out)["streams"][0].value("field_order", "(none)"), c.field_order) << c.name;
  }
}

TEST(Deinterlace, ProgressiveInputPassesUnchangedUnderAuto) {
  auto dir = temp_dir("deint-progressive");
  auto in = media("real_megamind.mkv");
  auto with = dir / "auto.mkv", without = dir / "identity.mkv";
  auto r = run(in, with, "deinterlace", "--frames 12");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("frames pass unchanged"), std::string::npos) << r.output;
  // The same RGB round trip without the stage (a null graph): every decoded frame bit-identical.
  ASSERT_EQ(run(in, without, "filter:graph=null", "--frames 12").exit_code, 0);
  auto a = framemd5(with, "0:v", false), b = framemd5(without, "0:v", false);
  ASSERT_EQ(a.size(), 12u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].md5, b[i].md5) << "frame " << i;
    EXPECT_EQ(a[i].pts_s, b[i].pts_s) << "frame " << i;
  }
}

TEST(Deinterlace, SegmentBoundariesAreInvisibleInFieldMode) {
  auto dir = temp_dir("deint-segments");
  auto clip = woven_clip(dir);
  auto whole = dir / "whole.mkv", segmented = dir / "segmented.mkv";
  ASSERT_EQ(run(clip.woven, whole, "deinterlace:mode=field", "--no-job").exit_code, 0);
  auto r = run(clip.woven, segmented, "deinterlace:mode=field", "--segment-frames 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(frame_md5s(segmented), frame_md5s(whole));
  EXPECT_EQ(frame_times(segmented), frame_times(whole));
}

TEST(Filter, CropReportsTheNewSizeToLaterStages) {
  auto dir = temp_dir("filter-crop");
  auto in = media("real_megamind.mkv");
  auto out = dir / "crop.mkv";
  // Quoted: the graph holds both separators of the pipeline syntax.
  auto r = run(in, out, "filter:graph='crop=iw-16:ih-8,unsharp',resize:scale=0.5", "--frames 6");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto probe = ffprobe(out)["streams"][0];
  EXPECT_EQ(probe["width"], (720 - 16) / 2);
  EXPECT_EQ(probe["height"], (528 - 8) / 2);
  EXPECT_EQ(count_frames(out), 6);
  // The bracket spelling is the same pipeline.
  auto bracket = dir / "bracket.mkv";
  ASSERT_EQ(run(in, bracket, "filter:graph=[crop=iw-16:ih-8,unsharp],resize:scale=0.5", "--frames 6").exit_code, 0);
  EXPECT_EQ(frame_md5s(bracket), frame_md5s(out));
}

TEST(Filter, OneToOneGraphKeepsEveryTimestampOfVariableRateInput) {
  auto dir = temp_dir("filter-vfr");
  auto in = media("vfr.mkv");
  auto out = dir / "hqdn3d.mkv";
  auto r = run(in, out, "filter:graph=hqdn3d=4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto t = frame_times(out), in_t = frame_times(in);
  ASSERT_FALSE(in_t.empty());
  EXPECT_EQ(t, in_t);
  // Audio is copied as with any other stage.
  EXPECT_EQ(framemd5(out, "0:a", true).size(), framemd5(in, "0:a", true).size());
}

TEST(Filter, BadGraphIsAOneLineUsageErrorNamingTheStage) {
  auto dir = temp_dir("filter-bad");
  auto in = media("real_megamind.mkv");
  struct Case {
    std::string pipeline, message;
  };
  for (const Case& c : {Case{"filter:graph=nosuch=3", "stage filter: bad filter graph 'nosuch=3': no filter named 'nosuch'"},
                        Case{"filter:graph='scale=w=abc'", "stage filter: bad filter graph 'scale=w=abc'"},
                        Case{"filter:graph=split", "stage filter: bad filter graph 'split'"},
                        Case{"filter:graph='crop=iw-8", "without its closing '"},
                        Case{"filter", "stage filter: give graph="}}) {
    auto r = run(in, dir / "out.mkv", c.pipeline, "--frames 2");
    EXPECT_EQ(r.exit_code, 2) << c.pipeline << ": " << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.pipeline << ": " << r.output;
    // The message is one line: nothing from libavfilter's own log around it.
    std::istringstream lines(r.output);
    int lines_naming_it = 0;
    for (std::string line; std::getline(lines, line);) lines_naming_it += line.find(c.message) != std::string::npos;
    EXPECT_EQ(lines_naming_it, 1) << r.output;
    EXPECT_EQ(r.output.find("Parsed_"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace framelift::test
