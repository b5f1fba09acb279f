// The `model` stage end to end: tiny TorchScript modules made here, run through the CLI on an RGB
// lossless clip (ffv1 bgr0 in and out), so every output value can be checked against an
// independent computation on the input's 8-bit values (read back by the ffmpeg CLI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "cli/cli_runner.h"
#include "support/media_check.h"
#include "support/torchscript_modules.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;
constexpr int kW = 64, kH = 48, kFrames = 8;
constexpr size_t kFrameBytes = size_t(kW) * kH * 3;

using Image = std::vector<uint8_t>;  // rgb24, row-major

// 8 frames of moving test pattern, 8-bit RGB, lossless: framelift reads them exactly.
fs::path rgb_clip(const fs::path& dir) {
  auto clip = dir / "in.mkv";
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=64x48:rate=10 -frames:v 8 -c:v ffv1 "
                        "-pix_fmt bgr0 '" + clip.string() + "'"),
            0);
  return clip;
}

std::vector<Image> frames_of(const fs::path& video) {
  auto raw = video.parent_path() / (video.stem().string() + ".rgb");
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -i '" + video.string() + "' -f rawvideo -pix_fmt rgb24 '" +
                        raw.string() + "'"),
            0);
  std::ifstream in(raw, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<Image> frames;
  for (size_t offset = 0; offset + kFrameBytes <= bytes.size(); offset += kFrameBytes)
    frames.emplace_back(bytes.begin() + long(offset), bytes.begin() + long(offset + kFrameBytes));
  return frames;
}

CliResult run_model(const fs::path& in, const fs::path& out, const std::string& pipeline, const std::string& extra = "") {
  return framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1 --pix-fmt bgr0 --pipeline " +
                   shell_quote(pipeline) + " " + extra);
}

// Largest difference between an output frame and what it should be.
template <class Want>
int max_error(const Image& got, Want want) {
  int worst = 0;
  for (size_t i = 0; i < kFrameBytes; ++i) worst = std::max(worst, std::abs(int(got[i]) - int(std::lround(want(i)))));
  return worst;
}

bool inside(size_t i, int x, int y, int w, int h) {
  const int px = int(i / 3 % kW), py = int(i / 3 / kW);
  return px >= x && px < x + w && py >= y && py < y + h;
}

TEST(ModelStageCli, IdentityIsBitExactWithTheSameTimestamps) {
  auto dir = temp_dir("model-id");
  auto in = rgb_clip(dir), out = dir / "out.mkv";
  auto r = run_model(in, out, "model:file=" + save_torchscript(dir / "identity.pt", modules::kIdentity).string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(frames_of(out), frames_of(in));
  auto a = framemd5(in, "0:v", false), b = framemd5(out, "0:v", false);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_DOUBLE_EQ(a[i].pts_s, b[i].pts_s);
}

TEST(ModelStageCli, ColorMatrixMatchesAnIndependentComputation) {
  auto dir = temp_dir("model-matrix");
  auto in = rgb_clip(dir), out = dir / "out.mkv";
  auto r = run_model(in, out, "model:file=" + save_torchscript(dir / "matrix.pt", modules::kColorMatrix).string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto src = frames_of(in), got = frames_of(out);
  ASSERT_EQ(got.size(), size_t(kFrames));
  for (size_t f = 0; f < got.size(); ++f) {
    const int err = max_error(got[f], [&](size_t i) {
      const size_t px = i / 3 * 3, c = i % 3;
      double v = 0;
      for (size_t j = 0; j < 3; ++j) v += modules::kMatrix[c][j] * src[f][px + j];
      return std::clamp(v, 0.0, 255.0);
    });
    EXPECT_LE(err, 1) << "frame " << f;  // one 8-bit step: float rounding at .5
  }
}

TEST(ModelStageCli, TemporalAverageRepeatsTheEdgeFramesAtTheClipEnds) {
  auto dir = temp_dir("model-avg");
  auto in = rgb_clip(dir), out = dir / "out.mkv";
  auto r = run_model(in, out, "model:file=" + save_torchscript(dir / "average3.pt", modules::kAverage3).string() + ":window=3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto src = frames_of(in), got = frames_of(out);
  ASSERT_EQ(got.size(), size_t(kFrames));
  auto mean = [&](int a, int b, int c) {
    return [&, a, b, c](size_t i) { return (src[size_t(a)][i] + src[size_t(b)][i] + src[size_t(c)][i]) / 3.0; };
  };
  EXPECT_LE(max_error(got[0], mean(0, 0, 1)), 1) << "first frame: (f0, f0, f1)";
  EXPECT_LE(max_error(got[3], mean(2, 3, 4)), 1) << "a middle frame";
  EXPECT_LE(max_error(got[7], mean(6, 7, 7)), 1) << "last frame: (f6, f7, f7)";
  for (int f = 1; f + 1 < kFrames; ++f) EXPECT_LE(max_error(got[size_t(f)], mean(f - 1, f, f + 1)), 1) << "frame " << f;
  // The pattern moves: a window without the repeated edge frame would be far off.
  EXPECT_GT(max_error(got[0], mean(0, 1, 2)), 8);
  auto a = framemd5(in, "0:v", false), b = framemd5(out, "0:v", false);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_DOUBLE_EQ(a[i].pts_s, b[i].pts_s);
}

TEST(ModelStageCli, TemporalWindowIsInvisibleAcrossJobSegments) {
  auto dir = temp_dir("model-seg");
  auto in = rgb_clip(dir), one = dir / "one.mkv", job = dir / "job.mkv";
  const std::string pipeline = "model:file=" + save_torchscript(dir / "average3.pt", modules::kAverage3).string() + ":window=3";
  ASSERT_EQ(run_model(in, one, pipeline, "--no-job").exit_code, 0);
  auto r = run_model(in, job, pipeline, "--segment-frames 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto a = framemd5(one, "0:v", false), b = framemd5(job, "0:v", false);
  ASSERT_EQ(a.size(), size_t(kFrames));
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].md5, b[i].md5) << "frame " << i;
    EXPECT_DOUBLE_EQ(a[i].pts_s, b[i].pts_s);
  }
}

// A mask image and the same rectangle as box= fill exactly the same pixels.
TEST(ModelStageCli, MaskedFillWithBoxAndWithMaskImage) {
  auto dir = temp_dir("model-mask");
  auto in = rgb_clip(dir), boxed = dir / "box.mkv", masked = dir / "mask.mkv", png = dir / "mask.png";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -f lavfi -i color=black:size=64x48,format=yuv444p,"
                        "drawbox=x=10:y=5:w=20:h=12:color=white:t=fill -frames:v 1 '" + png.string() + "'"),
            0);
  const std::string module = "model:file=" + save_torchscript(dir / "fill.pt", modules::kMaskedFill).string();
  auto r = run_model(in, boxed, module + ":box=10,5,20,12");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_model(in, masked, module + ":mask=" + png.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto src = frames_of(in), with_box = frames_of(boxed);
  ASSERT_EQ(with_box.size(), size_t(kFrames));
  EXPECT_EQ(frames_of(masked), with_box);
  for (size_t f = 0; f < with_box.size(); ++f)
    EXPECT_EQ(max_error(with_box[f], [&](size_t i) { return inside(i, 10, 5, 20, 12) ? 255.0 * modules::kFill[i % 3] : src[f][i]; }), 0)
        << "frame " << f;
}

TEST(ModelStageCli, MaskVideoIsFollowedFrameByFrame) {
  auto dir = temp_dir("model-maskvideo");
  auto in = rgb_clip(dir), out = dir / "out.mkv", mask = dir / "mask.mkv";
  // Black for frames 0-3, then a white rectangle.
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -f lavfi -i \"color=black:size=64x48:rate=10,format=yuv444p,"
                        "drawbox=x=30:y=20:w=16:h=8:color=white:t=fill:enable='gte(n,4)'\" -frames:v 8 -c:v ffv1 '" +
                        mask.string() + "'"),
            0);
  auto r = run_model(in, out, "model:file=" + save_torchscript(dir / "fill.pt", modules::kMaskedFill).string() + ":mask=" + mask.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto src = frames_of(in), got = frames_of(out);
  ASSERT_EQ(got.size(), size_t(kFrames));
  for (size_t f = 0; f < got.size(); ++f) {
    const bool filled = f >= 4;
    EXPECT_EQ(max_error(got[f], [&](size_t i) { return filled && inside(i, 30, 20, 16, 8) ? 255.0 * modules::kFill[i % 3] : src[f][i]; }), 0)
        << "frame " << f;
  }
}

TEST(ModelStageCli, WrongOutputShapeIsRefusedWithoutOutput) {
  auto dir = temp_dir("model-wrong");
  auto in = rgb_clip(dir), out = dir / "out.mkv";
  auto r = run_model(in, out, "model:file=" + save_torchscript(dir / "wrong.pt", modules::kWrongShape).string());
  EXPECT_EQ(r.exit_code, 5) << r.output;
  const size_t pos = r.output.find("error: ");
  ASSERT_NE(pos, std::string::npos) << r.output;
  const std::string line = r.output.substr(pos, r.output.find('\n', pos) - pos);
  EXPECT_NE(line.find("wrong.pt"), std::string::npos) << line;
  EXPECT_NE(line.find("shape [1, 1, 48, 64], expected [1, 3, 48, 64]"), std::string::npos) << line;
  EXPECT_EQ(r.output.find("error: ", pos + 1), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
  for (auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos) << "left behind: " << e.path();
}

}  // namespace
}  // namespace framelift::test
