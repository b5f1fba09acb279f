// End-to-end: text subtitles the output container cannot hold as they are go into the text
// format it does hold, with their text and times: an MP4's mov_text into Matroska (as ASS), a
// Matroska SubRip track into MP4 (as mov_text). The run used to refuse the .mkv output of an MP4
// with subtitles with "use .mkv". A stream no conversion fits is refused naming a container
// that holds it. Clips are made with the ffmpeg CLI and read back with it.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

// 12 frames at 25 fps and two subtitles, one in italics, the second straight after the first
// (no gap between them) and the first after a gap (MP4 fills gaps with empty samples).
fs::path clip_with_subtitles(const fs::path& dir, const std::string& name, const std::string& subtitle_codec) {
  const fs::path srt = dir / "subs.srt", clip = dir / name;
  std::ofstream(srt) << "1\n00:00:00,100 --> 00:00:00,300\nfirst line\n\n2\n00:00:00,300 --> 00:00:00,420\n<i>second</i>\n";
  std::string out;
  const int rc = run_command("ffmpeg -v error -y -f lavfi -i testsrc2=size=64x48:rate=25:duration=0.48 -i " + shell_quote(srt) +
                                 " -map 0:v -map 1:s -c:v libx264 -bf 2 -c:s " + subtitle_codec + " " + shell_quote(clip),
                             &out);
  EXPECT_EQ(rc, 0) << out;
  return clip;
}

// The subtitles of `file` as ffmpeg writes them out as SRT: their text, styling and times.
std::string subtitles_as_srt(const fs::path& file) {
  const fs::path srt = file.string() + ".srt";  // a file: into a pipe, ffmpeg 5.1 writes no SRT
  std::string log;
  EXPECT_EQ(run_command("ffmpeg -v error -y -i " + shell_quote(file) + " -map 0:s " + shell_quote(srt), &log), 0) << log;
  std::ifstream in(srt);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string subtitle_codec(const fs::path& file) {
  const nlohmann::json probed = ffprobe(file);  // kept: the loop reads into it
  for (auto& s : probed["streams"])
    if (s["codec_type"] == "subtitle") return s.value("codec_name", "");
  return "";
}

struct ConversionCase {
  std::string input, input_codec;  // the clip's container and subtitle codec
  std::string output, converted;   // the output's container and the codec it takes
  std::string job;                 // --no-job or --segment-frames 4
};

void PrintTo(const ConversionCase& c, std::ostream* os) { *os << c.input << " -> " << c.output << " " << c.job; }

class ConvertsTextSubtitles : public testing::TestWithParam<ConversionCase> {};

TEST_P(ConvertsTextSubtitles, TextStylingAndTimesAreKept) {
  const ConversionCase& c = GetParam();
  const fs::path dir = temp_dir("subconv");
  const fs::path in = clip_with_subtitles(dir, "in." + c.input, c.input_codec), out = dir / ("out." + c.output);
  ASSERT_EQ(subtitle_codec(in), c.input_codec);
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --preset ultrafast --progress none " + c.job);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_frames(out), 12);
  EXPECT_EQ(subtitle_codec(out), c.converted);
  const std::string before = subtitles_as_srt(in);
  ASSERT_NE(before.find("<i>second</i>"), std::string::npos) << before;
  EXPECT_EQ(subtitles_as_srt(out), before);
  // Said (by a job when it starts and again at its assembly), naming the stream and both codecs.
  EXPECT_NE(r.output.find("subtitle stream #1 (" + c.input_codec + ") is converted to " + c.converted), std::string::npos)
      << r.output;
}

INSTANTIATE_TEST_SUITE_P(RunMedia, ConvertsTextSubtitles,
                         testing::Values(ConversionCase{"mp4", "mov_text", "mkv", "ass", "--no-job"},
                                         ConversionCase{"mp4", "mov_text", "mkv", "ass", "--segment-frames 4"},
                                         ConversionCase{"mkv", "subrip", "mp4", "mov_text", "--no-job"},
                                         ConversionCase{"mkv", "subrip", "mp4", "mov_text", "--segment-frames 4"},
                                         ConversionCase{"mkv", "subrip", "mov", "mov_text", "--no-job"}),
                         [](const testing::TestParamInfo<ConversionCase>& info) {
                           const ConversionCase& c = info.param;
                           return c.input + "_to_" + c.output + (c.job == "--no-job" ? "_nojob" : "_job");
                         });

// mov_text copied from MP4 to MP4 stays mov_text, bit for bit, with its empty gap samples.
TEST(ConvertsTextSubtitles, MovTextIntoMp4IsCopiedNotConverted) {
  const fs::path dir = temp_dir("subcopy");
  const fs::path in = clip_with_subtitles(dir, "in.mp4", "mov_text"), out = dir / "out.mp4";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --preset ultrafast --progress none --no-job");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("converted"), std::string::npos) << r.output;
  std::vector<std::string> a, b;
  for (const FrameHash& h : framemd5(in, "0:s", true)) a.push_back(h.md5);
  for (const FrameHash& h : framemd5(out, "0:s", true)) b.push_back(h.md5);
  EXPECT_EQ(b, a);
}

// A stream the container cannot hold and no conversion fits: one line naming the output, the
// stream and its codec, and a container that holds it; nothing written.
TEST(ConvertsTextSubtitles, AStreamNoConversionFitsIsRefusedNamingAContainerThatHoldsIt) {
  const fs::path dir = temp_dir("subrefuse");
  const fs::path in = dir / "aac.mkv", out = dir / "out.webm";
  std::string log;
  ASSERT_EQ(run_command("ffmpeg -v error -y -f lavfi -i testsrc2=size=64x48:rate=25 -f lavfi -i sine=duration=0.4 -frames:v 10 "
                        "-c:v libx264 -c:a aac " + shell_quote(in), &log), 0) << log;
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c libvpx-vp9 --progress none --no-job");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find(out.string() + ": the webm container cannot hold the audio stream #1 (aac); use .mkv, which holds it"),
            std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace framelift::test
