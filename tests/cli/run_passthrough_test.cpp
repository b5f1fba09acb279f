// End-to-end: pass-through and per-frame stages keep every frame, timestamp and side stream.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {

void expect_same_timestamps(const std::vector<FrameHash>& a, const std::vector<FrameHash>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i].pts_s, b[i].pts_s, 1e-6) << "frame " << i;
}

void expect_same_packets(const std::filesystem::path& in, const std::filesystem::path& out, const std::string& map) {
  auto a = framemd5(in, map, true), b = framemd5(out, map, true);
  ASSERT_FALSE(a.empty()) << map;
  ASSERT_EQ(a.size(), b.size()) << map;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].md5, b[i].md5) << map << " packet " << i;
}

TEST(RunPassthrough, LosslessFfv1IsBitExactWithAudio) {
  auto in = media("ffv1_8bit.mkv");
  auto out = temp_dir("ffv1") / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1 --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto a = framemd5(in, "0:v", false), b = framemd5(out, "0:v", false);
  ASSERT_EQ(a.size(), 30u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].md5, b[i].md5) << "decoded frame " << i;
  expect_same_timestamps(a, b);
  expect_same_packets(in, out, "0:a");
}

TEST(RunPassthrough, KeepsAudioSubtitlesChaptersAttachmentMetadata) {
  auto in = media("cfr_8bit.mkv");
  auto out = temp_dir("full") / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --crf 30 --preset ultrafast");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_same_timestamps(framemd5(in, "0:v", false), framemd5(out, "0:v", false));
  expect_same_packets(in, out, "0:a");
  expect_same_packets(in, out, "0:s");
  auto p = ffprobe(out);
  ASSERT_EQ(p["chapters"].size(), 2u);
  EXPECT_EQ(p["chapters"][1]["tags"]["title"], "Ending");
  EXPECT_EQ(p["format"]["tags"]["title"], "framelift test clip");
  bool attachment = false;
  for (auto& s : p["streams"]) {
    if (s["codec_type"] == "attachment") {
      attachment = true;
      EXPECT_EQ(s["tags"]["filename"], "DejaVuSans.ttf");
    }
    if (s["codec_type"] == "video") {
      EXPECT_EQ(s["color_primaries"], "bt709");
      EXPECT_EQ(s["color_space"], "bt709");
    }
    if (s["codec_type"] == "audio") {
      EXPECT_EQ(s["tags"]["language"], "eng");
    }
  }
  EXPECT_TRUE(attachment);
}

TEST(RunPassthrough, VariableFrameRateTimestampsAreKept) {
  auto in = media("vfr.mkv");
  auto out = temp_dir("vfr") / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --preset ultrafast");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto a = framemd5(in, "0:v", false), b = framemd5(out, "0:v", false);
  ASSERT_EQ(a.size(), 49u);  // 50 generated, one dropped to make a gap
  expect_same_timestamps(a, b);
  expect_same_packets(in, out, "0:a");
}

TEST(RunPassthrough, TenBitHdrKeepsDepthColorAndMasteringMetadata) {
  auto in = media("hdr10_10bit.mp4");
  auto out = temp_dir("hdr") / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c libx265 --preset ultrafast -e x265-params=log-level=error");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto p = ffprobe(out);
  auto& v = p["streams"][0];
  EXPECT_EQ(v["pix_fmt"], "yuv420p10le");
  EXPECT_EQ(v["color_transfer"], "smpte2084");
  EXPECT_EQ(v["color_primaries"], "bt2020");
  bool mastering = false, light = false;
  for (auto& sd : v["side_data_list"]) {
    if (sd["side_data_type"] == "Mastering display metadata") mastering = true;
    if (sd["side_data_type"] == "Content light level metadata") {
      light = true;
      EXPECT_EQ(sd["max_content"], 1000);
    }
  }
  EXPECT_TRUE(mastering) << v.dump();
  EXPECT_TRUE(light) << v.dump();
  EXPECT_EQ(count_frames(out), 24);
}

TEST(RunPassthrough, RotationIsKeptInMp4) {
  auto in = media("hdr10_10bit.mp4");
  auto out = temp_dir("rot") / "out.mp4";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c libx265 --preset ultrafast -e x265-params=log-level=error");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto p = ffprobe(out);
  bool rotation = false;
  for (auto& sd : p["streams"][0]["side_data_list"])
    if (sd["side_data_type"] == "Display Matrix") rotation = std::abs(std::abs(sd["rotation"].get<int>()) - 90) == 0;
  EXPECT_TRUE(rotation) << p["streams"][0].dump();
}

TEST(RunStages, ResizeDoublesSizeKeepsFramesTimestampsAudio) {
  auto in = media("cfr_8bit.mkv");
  auto out = temp_dir("resize") / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --pipeline resize:scale=2 --preset ultrafast");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto p = ffprobe(out);
  EXPECT_EQ(p["streams"][0]["width"], 640);
  EXPECT_EQ(p["streams"][0]["height"], 480);
  expect_same_timestamps(framemd5(in, "0:v", false), framemd5(out, "0:v", false));
  expect_same_packets(in, out, "0:a");
}

TEST(RunStages, RealFootageDownscaleKeepsEveryFrame) {
  auto in = media("real_megamind.mkv");
  auto out = temp_dir("real") / "out.mp4";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --pipeline resize:w=360,algo=bicubic --preset ultrafast");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto p = ffprobe(out);
  EXPECT_EQ(p["streams"][0]["width"], 360);
  EXPECT_EQ(count_frames(out), 48);
}

TEST(RunStages, TenBitStaysTenBitThroughStages) {
  auto in = media("ffv1_10bit.mkv");
  auto out = temp_dir("10bit") / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --pipeline resize:scale=2 -c ffv1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto p = ffprobe(out);
  EXPECT_EQ(p["streams"][0]["pix_fmt"], "yuv444p10le");
  EXPECT_EQ(count_frames(out), 30);
}

TEST(RunEncoders, EachEncoderProducesEveryFrame) {
  // 10-bit 4:4:4 input: each encoder gets the closest format it takes (pixel format conversion
  // in a pass-through run).
  auto in = media("ffv1_10bit.mkv");
  auto dir = temp_dir("enc");
  struct Case { std::string args, file; } cases[] = {
      {"-c libx264 --preset ultrafast --crf 28", "x264.mp4"},
      {"-c libx265 --preset ultrafast -e x265-params=log-level=error", "x265.mkv"},
      {"-c libsvtav1 --preset 12", "av1.mkv"},
      {"-c prores_ks -e profile=0", "prores.mov"},
      {"-c ffv1", "ffv1.mkv"},
  };
  for (const auto& c : cases) {
    auto out = dir / c.file;
    auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " " + c.args);
    ASSERT_EQ(r.exit_code, 0) << c.args << "\n" << r.output;
    EXPECT_EQ(count_frames(out), 30) << c.args;
  }
}

TEST(RunProgress, JsonLinesEndWithDone) {
  auto in = media("cfr_8bit.mkv");
  auto out = temp_dir("progress") / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --preset ultrafast --progress json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Progress lines are JSON objects on lines of their own; log lines are not.
  std::istringstream lines(r.output);
  std::string line, last_json;
  while (std::getline(lines, line))
    if (!line.empty() && line[0] == '{') last_json = line;
  ASSERT_FALSE(last_json.empty()) << r.output;
  auto j = nlohmann::json::parse(last_json);
  EXPECT_EQ(j["event"], "done");
  EXPECT_EQ(j["frames_out"], 50);
  EXPECT_EQ(j["frames_in"], 50);
}

}  // namespace
}  // namespace framelift::test

namespace framelift::test {
namespace {

// An input with an alpha plane comes out opaque through the stages (they work on RGB) and
// through an encoder without alpha: the run says so, once, naming the input, and still succeeds.
TEST(RunPassthrough, DroppedAlphaIsSaidOnce) {
  auto dir = temp_dir("alpha");
  auto in = dir / "rgba.mov";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -f lavfi -i 'testsrc2=s=64x48:r=10,format=rgba' -frames:v 20 "
                        "-c:v qtrle -pix_fmt argb '" + in.string() + "'"),
            0);
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(dir / "staged.mkv") +
                     " -c ffv1 --pipeline resize:scale=2 --segment-frames 5 --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string said = "rgba.mov: its alpha channel is dropped (argb): the stages work on RGB";
  const size_t first = r.output.find(said);
  EXPECT_NE(first, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(said, first + 1), std::string::npos) << "said more than once:\n" << r.output;
  r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(dir / "plain.mp4") + " --no-job --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("its alpha channel is dropped: the encoder's yuv"), std::string::npos) << r.output;
  // An encoder that can keep alpha keeps it (ffv1 in bgra, not bgr0), and nothing is said.
  r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(dir / "kept.mkv") + " -c ffv1 --no-job --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("alpha channel"), std::string::npos) << r.output;
  EXPECT_EQ(ffprobe(dir / "kept.mkv")["streams"][0]["pix_fmt"], "bgra");
}

}  // namespace
}  // namespace framelift::test
