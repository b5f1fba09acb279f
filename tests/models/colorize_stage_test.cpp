// The `colorize` stage (issue 32, item 2) through the product, with the committed seeded DDColor
// (tests/data/arch/ddcolor-narrow, checked against upstream's classes in arch_ddcolor_test.cpp):
// * a black-and-white real clip gets colour and keeps its luma plane (exactly, to rounding);
// * smooth=N lowers the frame-to-frame chroma change on a static shot with grain, and a job of
//   segments gives the same frames as a pass;
// * a still PNG works as video does; models info and the planner know DDColor, priced at size=;
// * a network of another kind and a size off the network's multiple are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "models/arch_support.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

std::string ddcolor_file() { return (arch_reference_dir() / "ddcolor-narrow.pth").string(); }

// The decoded planes of a yuv420p video, [frames, bytes of one frame].
at::Tensor yuv_frames(const fs::path& video, int w, int h) {
  const fs::path raw = video.parent_path() / (video.stem().string() + ".yuv");
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -i " + shell_quote(video) + " -f rawvideo -pix_fmt yuv420p " + shell_quote(raw)), 0);
  std::ifstream in(raw, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  const int64_t frame = int64_t(w) * h * 3 / 2;
  return at::from_blob(bytes.data(), {int64_t(bytes.size()) / frame, frame}, at::kByte).to(at::kInt);
}

// 8 frames of real footage at 128x96 in black and white (yuv420p, chroma neutral), lossless.
fs::path grey_clip(const fs::path& dir) {
  const fs::path clip = dir / "grey.mkv";
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi -vf "
                        "'scale=128:96,hue=s=0,format=yuv420p,lutyuv=y=clip(val\\,16\\,235)' -frames:v 8 -c:v ffv1 " + shell_quote(clip)),
            0);
  return clip;
}

std::string colorize(const fs::path& in, const fs::path& out, const std::string& options, const std::string& extra = "--no-job",
                     const std::string& size = "64") {
  auto r = framelift("run -y -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1 --progress none " + extra +
                     " --pipeline 'colorize:model=" + ddcolor_file() + ":size=" + size + options + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

// Mean absolute frame-to-frame change of the chroma (U and V at full resolution, in 8-bit codes)
// over the whole frame, and over the mid-tones (luma 60 to 180 in every frame): where a colour
// fits the gamut at any luma. In deep shadows and highlights the chroma a luma can carry shrinks
// with it, so there grain in the luma moves the chroma too, smoothed or not.
struct Flicker {
  double whole = 0, mid_tones = 0;
};

Flicker chroma_flicker(const fs::path& video, int w, int h) {
  const fs::path raw = video.parent_path() / (video.stem().string() + ".yuv444");
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -i " + shell_quote(video) + " -f rawvideo -pix_fmt yuv444p16le " + shell_quote(raw)), 0);
  std::ifstream in(raw, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  const int64_t n = int64_t(w) * h;
  const at::Tensor planes = at::from_blob(bytes.data(), {int64_t(bytes.size()) / (6 * n), 3, n}, at::kShort).to(at::kInt).bitwise_and(0xffff).to(at::kFloat) / 256;
  const at::Tensor y = planes.select(1, 0), chroma = planes.narrow(1, 1, 2);
  const at::Tensor change = (chroma.narrow(0, 1, chroma.size(0) - 1) - chroma.narrow(0, 0, chroma.size(0) - 1)).abs().mean(at::IntArrayRef{0, 1});
  const at::Tensor mid = ((y > 60) & (y < 180)).all(0);
  EXPECT_GT(mid.to(at::kFloat).mean().item<double>(), 0.05) << "some mid-tones to measure";
  return {change.mean().item<double>(), change.masked_select(mid).mean().item<double>()};
}

TEST(ColorizeStage, ABlackAndWhiteClipGetsColourAndKeepsItsLuma) {
  const auto dir = temp_dir("colorize-clip");
  const fs::path clip = grey_clip(dir);
  colorize(clip, dir / "out.mkv", "");
  const at::Tensor in = yuv_frames(clip, 128, 96), out = yuv_frames(dir / "out.mkv", 128, 96);
  ASSERT_EQ(out.size(0), 8);
  const int64_t luma = 128 * 96;
  const at::Tensor dy = (out.narrow(1, 0, luma) - in.narrow(1, 0, luma)).abs();
  std::printf("colorize: luma max diff %d, %.3f%% exact; chroma mean |U-128|+|V-128| %.2f codes\n", dy.max().item<int>(),
              100 * dy.eq(0).to(at::kFloat).mean().item<double>(),
              (out.narrow(1, luma, luma / 2) - 128).abs().to(at::kFloat).mean().item<double>());
  EXPECT_LE(dy.max().item<int>(), 1) << "the luma plane is the input's";
  EXPECT_GE(dy.eq(0).to(at::kFloat).mean().item<double>(), 0.99);
  EXPECT_EQ((in.narrow(1, luma, luma / 2) - 128).abs().max().item<int>(), 0) << "the input is black and white";
  EXPECT_GT((out.narrow(1, luma, luma / 2) - 128).abs().to(at::kFloat).mean().item<double>(), 2.0) << "the output has colour";
}

TEST(ColorizeStage, SmoothingLowersFlickerOnAStaticShotAndAJobEqualsAPass) {
  const auto dir = temp_dir("colorize-static");
  // A static shot: one real frame held for 12 frames with fresh grain on each, as film has.
  const fs::path clip = dir / "static.mkv";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi -vf "
                        "'select=eq(n\\,30),scale=128:96,hue=s=0,lutyuv=y=clip(val\\,16\\,235),loop=11:1:0,noise=alls=24:allf=t,format=yuv420p' "
                        "-frames:v 12 -c:v ffv1 " + shell_quote(clip)),
            0);
  // At the frame's own size (128), so the network sees the grain and its colours follow it.
  colorize(clip, dir / "plain.mkv", "", "--no-job", "128");
  colorize(clip, dir / "smooth.mkv", ":smooth=5", "--no-job", "128");
  const Flicker plain = chroma_flicker(dir / "plain.mkv", 128, 96), smooth = chroma_flicker(dir / "smooth.mkv", 128, 96);
  std::printf("colorize chroma flicker on a static shot with grain, codes a frame: %.3f (mid-tones %.3f) without smoothing, "
              "%.3f (%.3f) with smooth=5\n", plain.whole, plain.mid_tones, smooth.whole, smooth.mid_tones);
  EXPECT_GT(plain.mid_tones, 0.1) << "the network's colours follow the grain";
  EXPECT_LT(smooth.mid_tones, plain.mid_tones * 0.5);
  EXPECT_LT(smooth.whole, plain.whole);
  // In segments of 3 frames (each fed 2 frames of context on each side): the same frames.
  colorize(clip, dir / "job.mkv", ":smooth=5", "--segment-frames 3", "128");
  EXPECT_TRUE(at::equal(yuv_frames(dir / "job.mkv", 128, 96), yuv_frames(dir / "smooth.mkv", 128, 96)));
}

TEST(ColorizeStage, AStillImageModelsInfoAndThePlanner) {
  const auto dir = temp_dir("colorize-still");
  write_png(real_frame(96, 64).mean(1, true).expand({1, 3, 64, 96}), dir / "in.png");
  auto r = framelift("run -y -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "out.png") +
                     " --progress none --pipeline 'colorize:model=" + ddcolor_file() + ":size=64'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const at::Tensor out = read_png(dir / "out.png", 96, 64);
  EXPECT_GT((out[0][0] - out[0][1]).abs().mean().item<double>() + (out[0][2] - out[0][1]).abs().mean().item<double>(), 0.01)
      << "colour, not grey";

  auto info = framelift("models info " + shell_quote(ddcolor_file()));
  ASSERT_EQ(info.exit_code, 0) << info.output;
  const auto j = nlohmann::json::parse(info.output.substr(info.output.find('{')));
  EXPECT_EQ(j["native"]["arch"], "ddcolor") << info.output;
  EXPECT_EQ(j["native"]["hyperparameters"]["queries"], 16) << info.output;

  const fs::path clip = grey_clip(dir);
  const auto planned = [&](const std::string& size) {
    const PlannedStage p = plan_first_stage_on_cpu(clip, "colorize:model=" + ddcolor_file() + ":size=" + size);
    EXPECT_EQ(p.arch, "ddcolor");
    return p.seconds_per_frame;
  };
  const double at64 = planned("64"), at512 = planned("512");
  EXPECT_GT(at64, 0);
  EXPECT_GT(at512, 8 * at64) << "the network runs at size x size whatever the frame";
}

TEST(ColorizeStage, AnotherKindOfNetworkAndABadSizeAreRefused) {
  const auto dir = temp_dir("colorize-refused");
  write_png(real_frame(32, 24), dir / "in.png");
  const std::string head = "run -y -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "out.png") + " --pipeline ";
  auto other = framelift(head + "'colorize:model=" + (arch_reference_dir() / "lama-ngf8.pth").string() + "'");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("is a lama network, not a colorization one"), std::string::npos) << other.output;
  auto size = framelift(head + "'colorize:model=" + ddcolor_file() + ":size=100'");
  EXPECT_EQ(size.exit_code, 2) << size.output;
  EXPECT_NE(size.output.find("size=100 must be a multiple of 32"), std::string::npos) << size.output;
  auto even = framelift(head + "'colorize:model=" + ddcolor_file() + ":smooth=4'");
  EXPECT_EQ(even.exit_code, 2) << even.output;
  EXPECT_FALSE(fs::exists(dir / "out.png"));
}

}  // namespace
}  // namespace framelift::test
