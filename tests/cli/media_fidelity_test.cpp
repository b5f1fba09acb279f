// End-to-end: what the source says about how its picture is shown (pixel aspect, rotation,
// cover art) reaches the output, in one pass and through a job's segments alike. Each clip is
// made here with the ffmpeg CLI and the output is checked with ffprobe.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

// A 64x48 FFV1 clip whose pixels are 16/11 wide (an anamorphic PAL-like picture), with the
// aspect in the Matroska header only: FFV1's decoder does not report it on frames.
fs::path anamorphic_clip(const fs::path& dir) {
  const fs::path clip = dir / "anamorphic.mkv";
  std::string out;
  const int rc = run_command("ffmpeg -v error -y -f lavfi -i testsrc2=size=64x48:rate=25 -frames:v 12 "
                             "-vf setsar=16/11 -c:v ffv1 " + shell_quote(clip), &out);
  EXPECT_EQ(rc, 0) << out;
  return clip;
}

struct Aspect {
  int width = 0, height = 0;
  std::string sar, dar;
};

Aspect video_aspect(const fs::path& file) {
  auto p = ffprobe(file);
  for (auto& s : p["streams"])
    if (s["codec_type"] == "video")
      return {s.value("width", 0), s.value("height", 0), s.value("sample_aspect_ratio", ""),
              s.value("display_aspect_ratio", "")};
  ADD_FAILURE() << file << ": no video stream";
  return {};
}

struct AspectCase {
  std::string container;  // output extension
  std::string pipeline;   // empty: pass-through
  std::string job;        // --no-job or --segment-frames 4
  int width, height;
  std::string sar;
  std::string codec = "libx264";  // ffv1: the aspect is in the segments' container only
};

void PrintTo(const AspectCase& c, std::ostream* os) {
  *os << "." << c.container << " -c " << c.codec << " [" << c.pipeline << "] " << c.job;
}

class KeepsAspect : public testing::TestWithParam<AspectCase> {};

TEST_P(KeepsAspect, DisplayAspectOfAnAnamorphicSourceIsKept) {
  const AspectCase& c = GetParam();
  const fs::path dir = temp_dir("aspect");
  const fs::path in = anamorphic_clip(dir), out = dir / ("out." + c.container);
  const std::string stages = c.pipeline.empty() ? "" : " --pipeline " + c.pipeline;
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c " + c.codec + (c.codec == "libx264" ? " --preset ultrafast" : "") +
                     stages + " " + c.job + " --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Aspect a = video_aspect(out);
  EXPECT_EQ(a.width, c.width);
  EXPECT_EQ(a.height, c.height);
  EXPECT_EQ(a.sar, c.sar);
  EXPECT_EQ(a.dar, "64:33") << "the source's display aspect (64x48 at 16:11)";
}

std::vector<AspectCase> aspect_cases() {
  std::vector<AspectCase> cases;
  for (std::string container : {"mkv", "mp4"})
    for (std::string job : {"--no-job", "--segment-frames 4"}) {
      cases.push_back({container, "", job, 64, 48, "16:11"});
      cases.push_back({container, "resize:scale=2", job, 128, 96, "16:11"});
      // Twice as wide in storage: each pixel becomes half as wide to show the same picture.
      cases.push_back({container, "resize:w=128,h=48", job, 128, 48, "8:11"});
    }
  cases.push_back({"mkv", "", "--no-job", 64, 48, "16:11", "ffv1"});
  cases.push_back({"mkv", "resize:scale=2", "--segment-frames 4", 128, 96, "16:11", "ffv1"});
  return cases;
}

std::string aspect_case_name(const testing::TestParamInfo<AspectCase>& info) {
  const AspectCase& c = info.param;
  std::string name = c.container + (c.pipeline.empty() ? "_passthrough" : c.pipeline.find("scale") != std::string::npos
                                                                              ? "_scale2" : "_stretch") +
                     (c.job == "--no-job" ? "_nojob" : "_job") + "_" + c.codec;
  return name;
}

INSTANTIATE_TEST_SUITE_P(RunMedia, KeepsAspect, testing::ValuesIn(aspect_cases()), aspect_case_name);

// An H.264 MP4 whose display matrix turns it 90 degrees (a phone video held upright).
fs::path rotated_clip(const fs::path& dir) {
  const fs::path plain = dir / "plain.mp4", clip = dir / "rotated.mp4";
  std::string out;
  int rc = run_command("ffmpeg -v error -y -f lavfi -i testsrc2=size=64x48:rate=25 -frames:v 12 -c:v libx264 " +
                       shell_quote(plain), &out);
  EXPECT_EQ(rc, 0) << out;
  rc = run_command("ffmpeg -v error -y -i " + shell_quote(plain) + " -c copy -metadata:s:v:0 rotate=90 " +
                   shell_quote(clip), &out);
  EXPECT_EQ(rc, 0) << out;
  return clip;
}

int count_lines_with(const std::string& text, const std::string& a, const std::string& b) {
  std::istringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) ++n;
  return n;
}

class RotationInMatroska : public testing::TestWithParam<std::string> {};

// FFmpeg 5.1's Matroska muxer has no place for a display matrix: the run goes on (the picture is
// intact) but says, once, that the output will show unrotated.
TEST_P(RotationInMatroska, DroppedRotationIsReportedOnce) {
  const fs::path dir = temp_dir("rotation");
  const fs::path in = rotated_clip(dir), out = dir / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --preset ultrafast " + GetParam() +
                     " --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_lines_with(r.output, out.string(), "rotation (90 degrees)"), 1) << r.output;
  EXPECT_EQ(count_lines_with(r.output, "warning: ", "rotation"), 1) << r.output;
  EXPECT_EQ(count_frames(out), 12);
}

INSTANTIATE_TEST_SUITE_P(RunMedia, RotationInMatroska, testing::Values("--no-job", "--segment-frames 4"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param == "--no-job" ? std::string("nojob") : std::string("job");
                         });

// An MP4 with cover art: a PNG as an attached picture, beside its video and audio.
fs::path clip_with_cover(const fs::path& dir, fs::path* cover) {
  const fs::path plain = dir / "plain.mp4", clip = dir / "with_cover.mp4";
  *cover = dir / "cover.png";
  std::string out;
  int rc = run_command("ffmpeg -v error -y -f lavfi -i testsrc2=size=64x48:rate=25 -f lavfi -i sine=duration=0.48 -frames:v 12 "
                       "-c:v libx264 -c:a aac " + shell_quote(plain) + " && ffmpeg -v error -y -f lavfi -i "
                       "color=red:size=32x24 -frames:v 1 " + shell_quote(*cover) + " && ffmpeg -v error -y -i " +
                       shell_quote(plain) + " -i " + shell_quote(*cover) + " -map 0 -map 1 -c copy -disposition:v:1 attached_pic " +
                       shell_quote(clip), &out);
  EXPECT_EQ(rc, 0) << out;
  return clip;
}

std::string file_bytes(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class CoverArtInMatroska : public testing::TestWithParam<std::string> {};

// Matroska keeps cover art as an attachment (cover.png, image/png), which its demuxer shows as
// an attached picture again; the run used to refuse the .mkv output for the picture's stream.
TEST_P(CoverArtInMatroska, TheCoverBecomesAnAttachmentWithItsBytes) {
  const fs::path dir = temp_dir("cover");
  fs::path cover;
  const fs::path in = clip_with_cover(dir, &cover), out = dir / "out.mkv";
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " --preset ultrafast " + GetParam() +
                     " --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_frames(out), 12);
  int covers = 0;
  const nlohmann::json probed = ffprobe(out);  // kept: the loop below reads into it
  for (auto& s : probed["streams"]) {
    if (!s.contains("disposition") || s["disposition"].value("attached_pic", 0) != 1) continue;
    ++covers;
    const nlohmann::json tags = s.value("tags", nlohmann::json::object());
    EXPECT_EQ(tags.value("filename", ""), "cover.png");
    EXPECT_EQ(tags.value("mimetype", ""), "image/png");
  }
  EXPECT_EQ(covers, 1) << r.output;
  const fs::path back = dir / "back.png";
  std::string log;
  // Matroska's demuxer shows an image attachment as an attached picture; its packet is the file.
  ASSERT_EQ(run_command("ffmpeg -v error -y -i " + shell_quote(out) + " -map 0:v:1 -c copy -frames:v 1 -f image2 " +
                        shell_quote(back), &log), 0) << log;
  EXPECT_EQ(file_bytes(back), file_bytes(cover)) << "the attachment holds the cover's own bytes; " << log;
}

INSTANTIATE_TEST_SUITE_P(RunMedia, CoverArtInMatroska, testing::Values("--no-job", "--segment-frames 4"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param == "--no-job" ? std::string("nojob") : std::string("job");
                         });

}  // namespace
}  // namespace framelift::test
