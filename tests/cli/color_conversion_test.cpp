// --color-conversion tensor: the GPU path's colour conversion (infer/yuv_tensor.h) run on the CPU,
// through the whole pipeline: decoded planes in, encoder planes out, a model stage and a CPU
// stage between. Its output must match the swscale path's to within rounding, with the same
// colour tags, frame count and timestamps.
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

fs::path run_with(const std::string& conversion, const std::string& pipeline, const fs::path& dir) {
  const fs::path out = dir / (conversion + ".mkv");
  auto r = framelift("run -i " + shell_quote(media("real_megamind.mkv")) + " -o " + shell_quote(out) +
                     " --frames 6 -c ffv1 --progress none --no-job --device cpu --color-conversion " + conversion +
                     " --pipeline " + pipeline);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return out;
}

TEST(ColorConversion, TensorOpsMatchSwscaleAroundAModelAndACpuStage) {
  const fs::path dir = temp_dir("color");
  // upscale (a model stage) then resize (a CPU stage): frames cross from one to the other.
  const std::string pipeline = "upscale:model=realesr-animevideov3-x2,resize:w=400:h=300";
  const fs::path tensor = run_with("tensor", pipeline, dir), swscale = run_with("swscale", pipeline, dir);
  ASSERT_TRUE(fs::exists(tensor) && fs::exists(swscale));
  EXPECT_GT(video_psnr(swscale, tensor), 40.0);
  const auto a = ffprobe(tensor)["streams"][0], b = ffprobe(swscale)["streams"][0];
  for (const char* key : {"width", "height", "pix_fmt", "color_space", "color_range"}) EXPECT_EQ(a[key], b[key]) << key;
  const auto fa = framemd5(tensor, "0:v", false), fb = framemd5(swscale, "0:v", false);
  ASSERT_EQ(fa.size(), 6u);
  ASSERT_EQ(fa.size(), fb.size());
  for (size_t i = 0; i < fa.size(); ++i) EXPECT_DOUBLE_EQ(fa[i].pts_s, fb[i].pts_s) << "frame " << i;
  // And the two conversions are not the same code: swscale's bicubic chroma differs from
  // bilinear somewhere in six real frames.
  bool differs = false;
  for (size_t i = 0; i < fa.size(); ++i) differs = differs || fa[i].md5 != fb[i].md5;
  EXPECT_TRUE(differs) << "--color-conversion tensor produced swscale's exact output: was it used?";
}

TEST(ColorConversion, AnUnknownModeIsAUsageError) {
  const fs::path dir = temp_dir("color_bad"), out = dir / "out.mkv";
  auto r = framelift("run -i " + shell_quote(media("real_megamind.mkv")) + " -o " + shell_quote(out) +
                     " --no-job --color-conversion gpu --pipeline resize:scale=2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--color-conversion: expected auto, swscale or tensor, got 'gpu'"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace framelift::test
