// What a model sees is what it was trained on (issue 21): a real 8-bit frame reaches a network as
// k/255, and the network's output comes back to 8 bits as round(255 v). Checked against a plain
// libtorch forward of the same checkpoint, written here from the published SRVGGNetCompact
// definition (convolutions, PReLU, pixel shuffle, nearest-upsampled input), fed k/255 by hand.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstdio>
#include <cstring>
#include <set>

#include "cli/cli_runner.h"
#include "infer/frame_tensor.h"
#include "infer/threads.h"
#include "media/av_error.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "weights/load_weights.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

fs::path aniscale() { return npm_package("waifu2x") / "models" / "2x-AniScale.pth"; }

// SRVGGNetCompact: body.0 conv, then PReLU / conv pairs, the last conv to 3 * scale^2 channels,
// pixel shuffle, plus the input upsampled by nearest neighbour.
at::Tensor compact_reference(const weights::StateDict& dict, const at::Tensor& x, int scale) {
  std::set<int> layers;
  for (const auto& [key, t] : dict)
    if (key.rfind("body.", 0) == 0) layers.insert(std::stoi(key.substr(5)));
  at::Tensor h = x;
  for (int i : layers) {
    const at::Tensor& w = dict.at("body." + std::to_string(i) + ".weight");
    if (w.dim() == 4)
      h = at::conv2d(h, w.to(at::kFloat), dict.at("body." + std::to_string(i) + ".bias").to(at::kFloat), 1, 1);
    else
      h = at::prelu(h, w.to(at::kFloat));
  }
  return at::pixel_shuffle(h, scale) + at::upsample_nearest2d(x, {x.size(2) * scale, x.size(3) * scale});
}

// The [1, 3, h, w] k/255 tensor as the decoder would hand it over: an 8-bit RGB frame.
media::FramePtr rgb24_frame(const at::Tensor& image) {
  at::Tensor hwc = image[0].mul(255).round().to(at::kByte).permute({1, 2, 0}).contiguous();
  media::FramePtr f = media::make_frame();
  f->width = int(image.size(3));
  f->height = int(image.size(2));
  f->format = AV_PIX_FMT_RGB24;
  media::check(av_frame_get_buffer(f.get(), 0), ErrorKind::Resource, "frame");
  for (int y = 0; y < f->height; ++y)
    std::memcpy(f->data[0] + y * f->linesize[0], hwc.data_ptr<uint8_t>() + y * f->width * 3, size_t(f->width) * 3);
  return f;
}

TEST(ConversionFidelity, CompactSeesKOver255AndMatchesAPlainForward) {
  if (!fs::exists(aniscale())) GTEST_SKIP() << "waifu2x npm package missing; run scripts/setup.sh";
  infer::configure_cpu_threads(0);
  const at::Tensor x = real_frame(64, 48);  // k/255, decoded by the ffmpeg CLI
  ASSERT_TRUE(x.defined());
  media::FramePtr frame = rgb24_frame(x);
  const at::Tensor seen = infer::FrameToTensor().convert(frame.get()).unsqueeze(0);
  EXPECT_TRUE(at::equal(seen, x)) << "max difference " << (seen - x).abs().max().item<double>();

  const auto dict = weights::load_weights(aniscale());
  const at::Tensor reference = compact_reference(dict, x, 2);
  auto model = models::load_model(aniscale());
  const at::Tensor ours = model->forward(seen);
  const double db = psnr(ours, reference);
  // Fed k/256 instead (FFmpeg 5.1's float conversion), the same network gives about 57 dB.
  const double db_k256 = psnr(model->forward(x * (255.0 / 256.0)), reference);
  std::printf("Compact x2 on a real frame vs a plain forward on k/255: %.1f dB (fed k/256: %.1f dB)\n", db, db_k256);
  EXPECT_GE(db, 80.0);
  EXPECT_LT(db_k256, 70.0) << "the check would not see a 1/256 scale";

  // Back to 8 bits: exactly round(255 v), clamped.
  media::VideoFormat out_format = media::VideoFormat::of_frame(frame.get(), {1, 25}, {25, 1});
  out_format.width *= 2;
  out_format.height *= 2;
  media::FramePtr out = infer::TensorToFrame(out_format).convert(reference[0]);
  const at::Tensor expected = reference[0].clamp(0, 1).mul(255).round().to(at::kByte).permute({1, 2, 0});
  int64_t wrong = 0;
  for (int y = 0; y < out->height; ++y)
    wrong += at::ne(at::from_blob(out->data[0] + y * out->linesize[0], {out->width, 3}, at::kByte), expected[y])
                 .sum()
                 .item<int64_t>();
  EXPECT_EQ(wrong, 0) << "8-bit samples that are not round(255 v)";
}

// The whole product path: a PNG in, `framelift upscale`, a PNG out, against the plain forward
// rounded to 8 bits. Every sample within one code; all but those whose value sits on a rounding
// boundary (float differences between the two forwards, < 1e-4) exact.
TEST(ConversionFidelity, UpscaleCommandOnARealPngMatchesThePlainForward) {
  if (!fs::exists(aniscale())) GTEST_SKIP() << "waifu2x npm package missing; run scripts/setup.sh";
  const auto dir = temp_dir("fidelity-png");
  const at::Tensor x = real_frame(64, 48);
  ASSERT_TRUE(x.defined());
  write_png(x, dir / "in.png");
  auto r = framelift("upscale -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "out.png") + " -m " +
                     shell_quote(aniscale()) + " --precision fp32 --progress none");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const at::Tensor got = read_png(dir / "out.png", 128, 96).mul(255).round();
  const at::Tensor expected = compact_reference(weights::load_weights(aniscale()), x, 2).clamp(0, 1).mul(255).round();
  const double max_diff = (got - expected).abs().max().item<double>();
  const double exact = at::eq(got, expected).to(at::kDouble).mean().item<double>();
  std::printf("framelift upscale PNG vs plain forward: %.4f%% of samples exact, max %.0f code\n", 100 * exact, max_diff);
  EXPECT_LE(max_diff, 1.0);
  EXPECT_GE(exact, 0.999);
}

}  // namespace
}  // namespace framelift::test
