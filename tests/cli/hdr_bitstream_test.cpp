// HDR10's mastering display and content light level reach the bitstream (HEVC SEI, AV1 metadata
// OBUs), not only the container: the output's video is copied into a bare stream (Annex B
// HEVC, IVF for AV1) that has no container metadata at all, and ffprobe must still find both on
// every frame, with the source's values. As a plain pass and as a job of segments, each of which
// is its own encoder run.
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

struct HdrFrames {
  int frames = 0, with_mastering = 0, with_light = 0;
  int key_frames = 0, key_frames_with_both = 0;
  std::string max_luminance;  // of the first frame, as ffprobe prints it
  int max_content = -1, max_average = -1;
};

HdrFrames hdr_frames(const fs::path& file) {
  std::string out;
  run_command("ffprobe -v error -select_streams v -show_frames -print_format json " + shell_quote(file), &out);
  HdrFrames h;
  const nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (!j.is_object()) return h;
  for (const auto& frame : j.value("frames", nlohmann::json::array())) {
    ++h.frames;
    const bool key = frame.value("key_frame", 0) == 1;
    h.key_frames += key;
    int kinds = 0;
    for (const auto& sd : frame.value("side_data_list", nlohmann::json::array())) {
      if (sd.value("side_data_type", "") == "Mastering display metadata") {
        ++h.with_mastering;
        ++kinds;
        if (h.max_luminance.empty()) h.max_luminance = sd.value("max_luminance", "");
      }
      if (sd.value("side_data_type", "") == "Content light level metadata") {
        ++h.with_light;
        ++kinds;
        h.max_content = sd.value("max_content", -1);
        h.max_average = sd.value("max_average", -1);
      }
    }
    h.key_frames_with_both += key && kinds == 2;
  }
  return h;
}

// ffprobe's "num/den" as a number (0 when it is not one).
double ratio(const std::string& fraction) {
  const size_t slash = fraction.find('/');
  if (fraction.empty() || slash == std::string::npos) return 0;
  return std::stod(fraction.substr(0, slash)) / std::stod(fraction.substr(slash + 1));
}

// The video of `file` copied into a container-less stream.
fs::path bare_stream(const fs::path& file, const std::string& format) {
  const fs::path bare = file.parent_path() / (file.stem().string() + "." + format);
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -i " + shell_quote(file) + " -map 0:v -c copy -f " + format + " " +
                        shell_quote(bare)),
            0);
  return bare;
}

bool have_encoder(const std::string& name) {
  std::string out;
  run_command("ffmpeg -hide_banner -encoders", &out);
  return out.find(" " + name + " ") != std::string::npos;
}

void expect_source_hdr10(const HdrFrames& h, int frames) {
  EXPECT_EQ(h.frames, frames);
  EXPECT_EQ(h.with_mastering, frames) << "frames without the mastering display";
  EXPECT_EQ(h.with_light, frames) << "frames without the content light level";
  // make-test-media.sh: L(10000000,1) = 1000 cd/m2, max-cll=1000,400.
  EXPECT_NE(h.max_luminance, "");
  EXPECT_NEAR(ratio(h.max_luminance), 1000.0, 0.5)
      << h.max_luminance;
  EXPECT_EQ(h.max_content, 1000);
  EXPECT_EQ(h.max_average, 400);
}

TEST(HdrBitstream, X265CarriesMasteringDisplayAndLightLevelInItsSei) {
  const fs::path in = media("hdr10_10bit.mp4");
  const HdrFrames source = hdr_frames(in);
  ASSERT_EQ(source.with_mastering, source.frames) << "the test input lost its HDR10 SEI";
  const fs::path dir = temp_dir("hdr-x265");
  for (const std::string mode : {"--no-job", "--segment-frames 8"}) {
    SCOPED_TRACE(mode);
    const fs::path out = dir / (mode == "--no-job" ? "pass.mkv" : "job.mkv");
    const CliResult r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " " + mode +
                                  " -c libx265 --preset ultrafast -e x265-params=log-level=error --progress none");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    expect_source_hdr10(hdr_frames(bare_stream(out, "hevc")), source.frames);
  }
}

TEST(HdrBitstream, SvtAv1CarriesMasteringDisplayAndLightLevelInMetadataObus) {
  if (!have_encoder("libsvtav1")) GTEST_SKIP() << "this FFmpeg has no libsvtav1";
  const fs::path in = media("hdr10_10bit.mp4");
  const fs::path out = temp_dir("hdr-svt") / "out.mkv";
  const CliResult r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) +
                                " --no-job -c libsvtav1 --preset 12 --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const HdrFrames h = hdr_frames(bare_stream(out, "ivf"));
  // SVT-AV1 writes the metadata OBUs with each key frame, and FFmpeg's decoder attaches them to
  // that frame: at least the first carries them, with the source's values.
  ASSERT_GT(h.with_mastering, 0) << "no mastering display in the AV1 bitstream";
  ASSERT_GT(h.with_light, 0) << "no content light level in the AV1 bitstream";
  EXPECT_EQ(h.max_content, 1000);
  EXPECT_EQ(h.max_average, 400);
  EXPECT_NEAR(ratio(h.max_luminance), 1000.0, 0.5)
      << h.max_luminance;
}

}  // namespace
}  // namespace framelift::test

namespace framelift::test {
namespace {

// libaom-av1 in this libavcodec takes HDR10 neither from frames nor from parameters (as NVENC):
// framelift splices the metadata OBUs into every key frame's temporal unit
// (media/hdr_bitstream_insert.h). In a job each segment is its own encode, opening on a key frame.
TEST(HdrBitstream, AomAv1GetsMetadataObusSplicedIntoEveryKeyFrame) {
  if (!have_encoder("libaom-av1")) GTEST_SKIP() << "this FFmpeg has no libaom-av1";
  const fs::path in = media("hdr10_10bit.mp4");
  const fs::path dir = temp_dir("hdr-aom");
  for (const std::string mode : {"--no-job", "--segment-frames 4"}) {
    SCOPED_TRACE(mode);
    const fs::path out = dir / (mode == "--no-job" ? "pass.mkv" : "job.mkv");
    const CliResult r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " " + mode +
                                  " --frames 8 -c libaom-av1 -e cpu-used=8 --progress none");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const HdrFrames h = hdr_frames(bare_stream(out, "ivf"));
    EXPECT_EQ(h.frames, 8);
    EXPECT_GE(h.key_frames, mode == "--no-job" ? 1 : 2);
    EXPECT_EQ(h.key_frames_with_both, h.key_frames) << "a key frame without the HDR10 metadata OBUs";
    EXPECT_EQ(h.max_content, 1000);
    EXPECT_EQ(h.max_average, 400);
    ASSERT_NE(h.max_luminance, "");
    EXPECT_NEAR(ratio(h.max_luminance), 1000.0, 0.5)
        << h.max_luminance;
  }
}

}  // namespace
}  // namespace framelift::test
