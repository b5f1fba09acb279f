#include "models/arch_support.h"

#include <gtest/gtest.h>

#include <iostream>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include "infer/tiler.h"
#include "models/architecture_registry.h"
#include "support/test_paths.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/load_weights.h"

namespace framelift::test {

at::Tensor real_frame(int w, int h, int frame) {
  // The clip is 4:2:0, so ffmpeg crops even sizes only: an odd side is cut from the next even one.
  const int ew = w + w % 2, eh = h + h % 2;
  const auto raw = temp_dir("arch-frame") / "frame.rgb";
  std::string out;
  const int rc = run_command(
      framelift::str("ffmpeg -v error -y -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi -vf "
                     "\"select=eq(n\\,", frame, "),crop=", ew, ":", eh, ":260:180\" -frames:v 1 -f rawvideo -pix_fmt rgb24 '",
                     raw.string(), "'"),
      &out);
  EXPECT_EQ(rc, 0) << out;
  std::ifstream in(raw, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.size(), static_cast<size_t>(ew) * eh * 3);
  if (bytes.size() != static_cast<size_t>(ew) * eh * 3) return {};
  return at::from_blob(bytes.data(), {eh, ew, 3}, at::kByte)
      .permute({2, 0, 1})
      .unsqueeze(0)
      .to(at::kFloat)
      .div(255.0)
      .narrow(2, 0, h)
      .narrow(3, 0, w)
      .contiguous();
}

void write_png(const at::Tensor& image, const std::filesystem::path& png) {
  at::Tensor hwc = image[0].clamp(0, 1).mul(255).round().to(at::kByte).permute({1, 2, 0}).contiguous();
  const auto raw = std::filesystem::path(png).replace_extension(".rgb");
  std::ofstream(raw, std::ios::binary).write(static_cast<const char*>(hwc.data_ptr()), hwc.numel());
  EXPECT_EQ(run_command(framelift::str("ffmpeg -v error -y -f rawvideo -pix_fmt rgb24 -s ", image.size(3), "x",
                                       image.size(2), " -i '", raw.string(), "' '", png.string(), "'")),
            0);
}

at::Tensor read_png(const std::filesystem::path& png, int w, int h) {
  const auto raw = std::filesystem::path(png).replace_extension(".rgb");
  EXPECT_EQ(run_command(framelift::str("ffmpeg -v error -y -i '", png.string(), "' -f rawvideo -pix_fmt rgb24 '",
                                       raw.string(), "'")),
            0);
  std::ifstream in(raw, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.size(), static_cast<size_t>(w) * h * 3) << png;
  if (bytes.size() != static_cast<size_t>(w) * h * 3) return {};
  return at::from_blob(bytes.data(), {h, w, 3}, at::kByte).permute({2, 0, 1}).unsqueeze(0).to(at::kFloat).div(255.0);
}

double psnr(const at::Tensor& a, const at::Tensor& b) {
  const double mse = (a.to(at::kDouble) - b.to(at::kDouble)).pow(2).mean().item<double>();
  return mse == 0 ? 99.0 : 10.0 * std::log10(1.0 / mse);
}

double psnr_downscaled(const at::Tensor& output, const at::Tensor& input) {
  at::Tensor small = at::_upsample_bicubic2d_aa(output.clamp(0, 1), {input.size(2), input.size(3)}, false,
                                                c10::nullopt, c10::nullopt);
  return psnr(small.clamp(0, 1), input);
}

at::Tensor random_weight(std::initializer_list<int64_t> shape) {
  static at::Generator gen = [] {
    auto g = at::detail::createCPUGenerator(1234);
    return g;
  }();
  return at::randn(shape, gen).mul_(0.05);
}

double psnr_in_range(const at::Tensor& a, const at::Tensor& b) {
  const double range = (b.max() - b.min()).item<double>();
  const double mse = (a.to(at::kDouble) - b.to(at::kDouble)).pow(2).mean().item<double>();
  return mse == 0 ? 200 : 10 * std::log10(range * range / mse);
}

std::filesystem::path arch_reference_dir() { return source_dir() / "tests" / "data" / "arch"; }

std::string refusal_of(const weights::StateDict& dict) {
  try {
    models::build_model(dict, "test.pth");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Model) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "built";
  return "";
}

void expect_refused(const weights::StateDict& dict, const std::string& fragment) {
  const std::string message = refusal_of(dict);
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
}

ReferenceRun run_reference(const std::string& name) {
  const std::filesystem::path pth = arch_reference_dir() / (name + ".pth");
  const weights::StateDict io = weights::load_weights(arch_reference_dir() / (name + ".ref.safetensors"));
  ReferenceRun r;
  r.detected = models::detect(weights::load_weights(pth), pth.string());
  auto model = models::load_model(pth);
  r.info = model->info();
  const at::Tensor y = infer::upscale_tiled(*model, io.at("input"), {.tile = 0});
  EXPECT_EQ(y.sizes(), io.at("output").sizes());
  if (y.sizes() == io.at("output").sizes()) r.db = psnr_in_range(y, io.at("output"));
  return r;
}

TiledAndBf16 tiled_and_bf16(models::ImageModel& model, const at::Tensor& frame, int tile) {
  const at::Tensor whole = infer::upscale_tiled(model, frame, {.tile = 0});
  TiledAndBf16 r{};
  r.tiled_db = psnr_in_range(infer::upscale_tiled(model, frame, {.tile = tile, .overlap = -1}), whole);
  r.seams_db = psnr_in_range(infer::upscale_tiled(model, frame, {.tile = tile, .overlap = 0}), whole);
  model.to(c10::kCPU, at::kBFloat16);
  r.bf16_db = psnr_in_range(infer::upscale_tiled(model, frame.to(at::kBFloat16), {.tile = 0}).to(at::kFloat), whole);
  return r;
}

// A complete OmniSR state dict with random weights, in upstream's key layout.
weights::StateDict omnisr_dict(int64_t feat, int groups, int blocks, int64_t window, int64_t scale, bool bias) {
  weights::StateDict d;
  auto conv = [&](const std::string& p, int64_t in, int64_t out, int64_t k, bool with_bias) {
    d[p + ".weight"] = random_weight({out, in, k, k});
    if (with_bias) d[p + ".bias"] = random_weight({out});
  };
  auto norm = [&](const std::string& p) {
    d[p + ".weight"] = at::ones({feat}) + random_weight({feat});
    d[p + ".bias"] = random_weight({feat});
  };
  conv("input", 3, feat, 3, bias);
  conv("output", feat, feat, 3, bias);
  conv("up.0", feat, 3 * scale * scale, 3, bias);
  for (int g = 0; g < groups; ++g) {
    const std::string group = str("residual_layer.", g);
    for (int b = 0; b < blocks; ++b) {
      const std::string p = str(group, ".residual_layer.", b, ".layer.");
      conv(p + "0.fn.0", feat, feat, 1, true);
      conv(p + "0.fn.2", 1, feat, 3, true);
      d[p + "0.fn.4.gate.1.weight"] = random_weight({feat / 4, feat});
      d[p + "0.fn.4.gate.3.weight"] = random_weight({feat, feat / 4});
      conv(p + "0.fn.5", feat, feat, 1, true);
      for (const char* i : {"2", "8"}) {
        norm(p + i + ".norm");
        d[p + i + ".fn.to_qkv.weight"] = random_weight({3 * feat, feat});
        d[p + i + ".fn.to_out.0.weight"] = random_weight({feat, feat});
        d[p + i + ".fn.rel_pos_bias.weight"] = random_weight({(2 * window - 1) * (2 * window - 1), 4});
      }
      for (const char* i : {"5", "11"}) {
        norm(p + i + ".norm");
        d[p + i + ".fn.temperature"] = at::ones({4, 1, 1});
        conv(p + i + ".fn.qkv", feat, 3 * feat, 1, false);
        conv(p + i + ".fn.qkv_dwconv", 1, 3 * feat, 3, false);
        conv(p + i + ".fn.project_out", feat, feat, 1, false);
      }
      for (const char* i : {"4", "6", "10", "12"}) {
        norm(p + i + ".norm");
        conv(p + i + ".fn.project_in", feat, 2 * feat, 1, false);
        conv(p + i + ".fn.dwconv", 1, 2 * feat, 3, false);
        conv(p + i + ".fn.project_out", feat, feat, 1, false);
      }
    }
    conv(str(group, ".residual_layer.", blocks), feat, feat, 1, bias);
    const int64_t f = std::max<int64_t>(feat / 4, 16);
    conv(group + ".esa.conv1", feat, f, 1, true);
    conv(group + ".esa.conv_f", f, f, 1, true);
    conv(group + ".esa.conv2", f, f, 3, true);
    conv(group + ".esa.conv3", f, f, 3, true);
    conv(group + ".esa.conv4", f, feat, 1, true);
  }
  return d;
}

FillAgreement fill_agreement(models::ImageModel& model, const weights::StateDict& io, const std::string& name) {
  const at::Tensor& input = io.at("input");
  const at::Tensor& want = io.at("output");
  const at::Tensor image = input.narrow(1, 0, 3), hole = input.narrow(1, 3, 1).expand_as(image) > 0.5;
  FillAgreement r;
  const at::Tensor got = model.forward(input);
  if (got.sizes() != want.sizes()) {
    ADD_FAILURE() << name << ": output " << got.sizes() << ", upstream's " << want.sizes();
    return r;
  }
  r.fp32_db = psnr_in_range(at::masked_select(got, hole), at::masked_select(want, hole));
  r.hole_db = psnr_in_range(at::masked_select(image, hole), at::masked_select(want, hole));
  r.outside_exact = at::equal(at::masked_select(got, ~hole), at::masked_select(image, ~hole));
  model.to(c10::kCPU, at::kBFloat16);
  const at::Tensor bf16 = model.forward(input.to(at::kBFloat16)).to(at::kFloat);
  r.bf16_db = psnr_in_range(at::masked_select(bf16, hole), at::masked_select(want, hole));
  std::cout << name << ": the fill against upstream's, fp32 " << r.fp32_db << " dB, bf16 " << r.bf16_db << " dB (the hole's own pixels "
            << r.hole_db << " dB)\n";
  return r;
}

at::Tensor rgb_frames(const std::filesystem::path& video, int w, int h) {
  const std::filesystem::path raw = video.parent_path() / (video.stem().string() + ".rgb");
  EXPECT_EQ(run_command(framelift::str("ffmpeg -nostdin -v error -y -i '", video.string(), "' -f rawvideo -pix_fmt rgb24 '", raw.string(), "'")), 0);
  std::ifstream in(raw, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  const int64_t n = int64_t(bytes.size()) / (int64_t(w) * h * 3);
  return at::from_blob(bytes.data(), {n, h, w, 3}, at::kByte).clone();
}

}  // namespace framelift::test
