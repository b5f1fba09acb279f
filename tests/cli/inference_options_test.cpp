// The inference flags of `run`/`upscale` end to end: --device, --precision, --max-memory (forced
// OOM recovery), --batch, --tile-batch, --threads; and color order, range and 10-bit depth through a real model.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>

#include "cli/cli_runner.h"
#include "support/media_check.h"
#include "util/str.h"

namespace framelift::test {
namespace {

bool have_models() { return std::filesystem::exists(npm_package("waifu2x") / "real-esrgan/models"); }


// Decodes the first frame of a video as 16-bit RGB, row-major [h][w][3].
std::vector<uint16_t> rgb48(const std::filesystem::path& video, int w, int h) {
  auto raw = video.parent_path() / (video.stem().string() + ".rgb48");
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -i '" + video.string() +
                        "' -frames:v 1 -f rawvideo -pix_fmt rgb48le '" + raw.string() + "'"),
            0);
  std::ifstream in(raw, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<uint16_t> px(bytes.size() / 2);
  std::memcpy(px.data(), bytes.data(), px.size() * 2);
  EXPECT_EQ(px.size(), size_t(w) * h * 3);
  return px;
}

TEST(InferenceOptions, CudaOnAMachineWithoutOneIsAResourceError) {
  if (!have_models()) GTEST_SKIP() << "models not installed (scripts/setup.sh)";
  auto out = temp_dir("dev") / "out.mkv";
  auto r = framelift("upscale -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(out) +
                     " --frames 1 --device cuda:7");
  EXPECT_EQ(r.exit_code, 6) << r.output;
  EXPECT_NE(r.output.find("--device cuda:7"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  r = framelift("upscale -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(out) +
                " --frames 1 --device cpu --precision fp16");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("fp16 needs a CUDA device"), std::string::npos) << r.output;
}

TEST(InferenceOptions, SmallMemoryBudgetTilesAndMatchesTheUnboundedRun) {
  if (!have_models()) GTEST_SKIP() << "models not installed (scripts/setup.sh)";
  auto dir = temp_dir("maxmem");
  // Two 320x240 frames of real footage: the whole frame needs ~55 MiB in animevideov3 in fp32
  // (half in bf16, which would fit the budget below whole).
  auto in = dir / "in.mkv";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -i '" + media("real_megamind.mkv").string() +
                        "' -vf crop=320:240:200:100 -frames:v 2 -c:v ffv1 '" + in.string() + "'"),
            0);
  auto free_run = dir / "free.mkv", bounded = dir / "bounded.mkv", forced = dir / "forced.mkv";
  auto args = " -m realesr-animevideov3-x2 -c ffv1 --device cpu --precision fp32 --queue-depth 1";
  auto r = framelift("upscale -i " + shell_quote(in) + " -o " + shell_quote(free_run) + args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("-> whole frames"), std::string::npos) << r.output;
  // Planned: the budget picks a tile size before the first frame.
  r = framelift("upscale -i " + shell_quote(in) + " -o " + shell_quote(bounded) + args + " --max-memory 40M");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("MiB available -> [0-9]+ px tiles"))) << r.output;
  // Forced: a fixed whole-frame tile under the same budget fails, is halved and retried.
  r = framelift("upscale -i " + shell_quote(in) + " -o " + shell_quote(forced) + args + " --max-memory 40M --tile 4096");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("out of memory; retrying the frame with"), std::string::npos) << r.output;
  EXPECT_EQ(count_frames(forced), 2);
  const double planned = video_psnr(free_run, bounded), halved = video_psnr(free_run, forced);
  std::printf("tiled under 40M vs whole frames: planned %.2f dB, after OOM %.2f dB\n", planned, halved);
  EXPECT_GE(planned, 50.0);
  EXPECT_GE(halved, 50.0);
  // Far too little memory: refused before anything runs, naming the option and the least it takes.
  auto none = dir / "none.mkv";
  r = framelift("upscale -i " + shell_quote(in) + " -o " + shell_quote(none) + args + " --max-memory 2M");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--max-memory 2M is too small: give at least 16M"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(none));
}

TEST(InferenceOptions, BatchAndThreadsDoNotChangeTheResult) {
  if (!have_models()) GTEST_SKIP() << "models not installed (scripts/setup.sh)";
  auto in = media("cfr_8bit.mkv");
  auto dir = temp_dir("batch");
  auto one = dir / "one.mkv", batched = dir / "batched.mkv";
  auto args = " --frames 5 -c ffv1 --pipeline resize:w=96:h=64,upscale:model=realesr-animevideov3-x2";
  ASSERT_EQ(framelift("run -i " + shell_quote(in) + " -o " + shell_quote(one) + args).exit_code, 0);
  // 5 frames in batches of 2: the last batch is partial and must still come out.
  auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(batched) + args + " --batch 2 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("batch 2"), std::string::npos) << r.output;
  EXPECT_EQ(count_frames(batched), 5);
  EXPECT_EQ(framemd5(one, "0:v", false).size(), 5u);
  EXPECT_GE(video_psnr(one, batched), 60.0);
}

TEST(InferenceOptions, TileBatchDoesNotChangeTheResult) {
  if (!have_models()) GTEST_SKIP() << "models not installed (scripts/setup.sh)";
  auto in = media("real_megamind.mkv");
  auto dir = temp_dir("tile_batch");
  auto one = dir / "one.mkv", batched = dir / "batched.mkv";
  const std::string args = " --frames 2 -c ffv1 --progress none --tile 48 --pipeline upscale:model=realesr-animevideov3-x2";
  ASSERT_EQ(framelift(str("run -i ", shell_quote(in), " -o ", shell_quote(one), args)).exit_code, 0);
  auto r = framelift(str("run -i ", shell_quote(in), " -o ", shell_quote(batched), args, " --tile-batch 4"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_frames(batched), 2);
  EXPECT_GE(video_psnr(one, batched), 60.0);
  auto bad = framelift(str("run -i ", shell_quote(in), " -o ", shell_quote(dir / "bad.mkv"), args, " --tile-batch 0"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("tile_batch=0 (from the command line) is not allowed (a whole number, 1 <= N <= 256)"), std::string::npos) << bad.output;
}

TEST(InferenceOptions, ColorPatchesKeepOrderRangeAndTenBitDepthThroughTheModel) {
  if (!have_models()) GTEST_SKIP() << "models not installed (scripts/setup.sh)";
  auto dir = temp_dir("patch");
  auto in = dir / "patches.mkv", out = dir / "out.mkv";
  // Four 64x48 flat patches (red, green, blue, a 10-bit grey that 8 bits cannot hold) above a
  // horizontal 10-bit ramp, encoded lossless in yuv444p10.
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y "
                        "-f lavfi -i color=c=0xC01010:s=64x48 -f lavfi -i color=c=0x10C010:s=64x48 "
                        "-f lavfi -i color=c=0x1010C0:s=64x48 -f lavfi -i color=c=0x808080:s=64x48 "
                        "-f lavfi -i \"nullsrc=s=256x48,format=yuv444p10le,geq=lum='64+X*3.4':cb=512:cr=512\" "
                        "-filter_complex \"[0][1][2][3]hstack=4,format=yuv444p10le[top];[top][4]vstack,format=yuv444p10le\" "
                        "-frames:v 1 -c:v ffv1 '" + in.string() + "'"),
            0);
  auto r = framelift("upscale -i " + shell_quote(in) + " -o " + shell_quote(out) + " -m realesr-animevideov3-x2 -c ffv1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ffprobe(out)["streams"][0]["pix_fmt"], "yuv444p10le");
  // The reference binary on the same picture (8-bit PNG: it reads nothing else).
  auto png = dir / "patches.png", ref_png = dir / "ref.png", ref = dir / "ref.mkv";
  auto esrgan = npm_package("waifu2x") / "real-esrgan";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i '" + in.string() + "' -pix_fmt rgb24 '" + png.string() + "'"), 0);
  ASSERT_EQ(run_command("'" + (esrgan / "realesrgan-ncnn-vulkan").string() + "' -i '" + png.string() + "' -o '" +
                        ref_png.string() + "' -n realesr-animevideov3 -s 2 -m '" + (esrgan / "models").string() +
                        "' >/dev/null 2>&1"),
            0);
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i '" + ref_png.string() + "' -c:v ffv1 '" + ref.string() + "'"), 0);
  auto a = rgb48(in, 256, 96), b = rgb48(out, 512, 192), c = rgb48(ref, 512, 192);
  // Mean color over the middle 16x16 of each patch, in and out.
  auto mean = [](const std::vector<uint16_t>& px, int w, int cx, int cy, int half, int c) {
    double sum = 0;
    for (int y = cy - half; y < cy + half; ++y)
      for (int x = cx - half; x < cx + half; ++x) sum += px[(size_t(y) * w + x) * 3 + c];
    return sum / (4.0 * half * half) / 65535.0;
  };
  for (int p = 0; p < 4; ++p) {
    for (int ch = 0; ch < 3; ++ch) {
      const double in_value = mean(a, 256, 32 + 64 * p, 24, 8, ch), got = mean(b, 512, 64 + 128 * p, 48, 16, ch),
                   reference = mean(c, 512, 64 + 128 * p, 48, 16, ch);
      // The model itself shifts flat saturated colors a little (the reference binary by the same
      // amount: measured +0.033 on green's red channel); a swapped channel or a wrong range is
      // off by 0.5 or more.
      EXPECT_NEAR(got, reference, 1.5 / 255) << "patch " << p << " channel " << ch;
      EXPECT_NEAR(got, in_value, 16.0 / 255) << "patch " << p << " channel " << ch;
    }
  }
  // The ramp: an 8-bit path would leave at most 256 distinct green levels across it.
  std::set<uint16_t> levels;
  for (int x = 0; x < 512; ++x) levels.insert(b[(size_t(150) * 512 + x) * 3 + 1] >> 6);
  std::printf("distinct 10-bit levels across the upscaled ramp: %zu\n", levels.size());
  EXPECT_GT(levels.size(), 300u);
}

}  // namespace
}  // namespace framelift::test
