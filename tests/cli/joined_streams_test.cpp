// End-to-end: inputs whose stream changes mid-way, as two MPEG-TS recordings joined with `cat`
// are (the timestamps start again from the beginning; the second may have another size). Each
// clip is made here with the ffmpeg CLI and the output is checked with ffmpeg/ffprobe. What
// must hold: every frame and every audio packet comes out, timestamps keep going forward one
// frame apart (not one tick apart: that would play as a still), frames of a new size come out
// at the first size, and the run says what it changed.
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "support/joined_clips.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

constexpr int kRate = kJoinedRate, kFramesEach = kJoinedFramesEach;

std::vector<std::string> md5s(const std::vector<FrameHash>& frames) {
  std::vector<std::string> out;
  for (const FrameHash& f : frames) out.push_back(f.md5);
  return out;
}

void expect_one_frame_apart(const std::vector<FrameHash>& frames) {
  for (size_t i = 1; i < frames.size(); ++i) {
    const double step = frames[i].pts_s - frames[i - 1].pts_s;
    EXPECT_GT(step, 0.5 / kRate) << "frame " << i << " at " << frames[i].pts_s;
    EXPECT_LT(step, 1.5 / kRate) << "frame " << i << " at " << frames[i].pts_s;
  }
}

void expect_audio_moves_forward(const std::vector<FrameHash>& packets) {
  for (size_t i = 1; i < packets.size(); ++i) EXPECT_GT(packets[i].pts_s, packets[i - 1].pts_s) << "audio packet " << i;
}

int64_t audio_packets(const fs::path& file) { return int64_t(framemd5(file, "0:a", true).size()); }

class JoinedStreams : public testing::TestWithParam<std::string> {};

// Same size, the clock starting over: pass-through keeps every frame bit for bit (FFV1), one
// frame step apart, and every audio packet.
TEST_P(JoinedStreams, TimestampsThatGoBackAreRetimedAndReported) {
  const fs::path dir = temp_dir("joined-reset");
  const fs::path a = ts_clip(dir, "a", "64x48", 0), b = ts_clip(dir, "b", "64x48", 5);
  const fs::path in = joined(dir, a, b), out = dir / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1 " + GetParam() +
                     " --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("go back"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(in.string()), std::string::npos) << r.output;

  std::vector<std::string> expected = md5s(framemd5(a, "0:v", false));
  for (const std::string& m : md5s(framemd5(b, "0:v", false))) expected.push_back(m);
  ASSERT_EQ(expected.size(), size_t(2 * kFramesEach));
  const std::vector<FrameHash> frames = framemd5(out, "0:v", false);
  EXPECT_EQ(md5s(frames), expected);
  expect_one_frame_apart(frames);

  EXPECT_EQ(audio_packets(out), audio_packets(a) + audio_packets(b));
  expect_audio_moves_forward(framemd5(out, "0:a", true));
}

// The second recording is larger (96x64 after 64x48): every frame comes out at 64x48, the first
// part untouched, the second fitted (letterboxed: its 3:2 shape kept, not stretched to 4:3).
TEST_P(JoinedStreams, AFrameSizeChangeIsFittedAndReported) {
  const fs::path dir = temp_dir("joined-size");
  const fs::path a = ts_clip(dir, "a", "64x48", 0), b = ts_clip(dir, "b", "96x64", 5);
  const fs::path in = joined(dir, a, b), out = dir / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1 " + GetParam() +
                     " --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("changes size"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("96x64"), std::string::npos) << r.output;

  const nlohmann::json probe = ffprobe(out);
  EXPECT_EQ(probe["streams"][0]["width"], 64);
  EXPECT_EQ(probe["streams"][0]["height"], 48);
  const std::vector<FrameHash> frames = framemd5(out, "0:v", false);
  ASSERT_EQ(frames.size(), size_t(2 * kFramesEach));
  const std::vector<std::string> first = md5s(framemd5(a, "0:v", false));
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(frames[i].md5, first[i]) << "frame " << i;
  expect_one_frame_apart(frames);
  // The fitted frames: the picture moves (not one frame repeated), with black bars at the top
  // and the bottom (3:2 in 4:3: 64x43 inside 64x48).
  EXPECT_NE(frames[kFramesEach].md5, frames.back().md5);
  std::string rows;
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -i " + shell_quote(out) + " -vf 'select=eq(n\\," +
                            std::to_string(kFramesEach + 3) + "),format=gray,crop=64:2:0:0' -frames:v 1 -f rawvideo -",
                        &rows),
            0);
  ASSERT_EQ(rows.size(), 128u);
  for (unsigned char luma : rows) EXPECT_LE(int(luma), 17) << "the top bar is black";
  EXPECT_EQ(audio_packets(out), audio_packets(a) + audio_packets(b));
}

INSTANTIATE_TEST_SUITE_P(RunMedia, JoinedStreams, testing::Values("--no-job", "--segment-frames 4"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param == "--no-job" ? std::string("nojob") : std::string("job");
                         });

}  // namespace
}  // namespace framelift::test
