#include "models/swin_shapes.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <iostream>

#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "weights/load_weights.h"

namespace framelift::test {

void zero_conv(weights::StateDict& d, const std::string& p, int64_t in, int64_t out, int64_t k) {
  d[p + ".weight"] = at::zeros({out, in, k, k});
  d[p + ".bias"] = at::zeros({out});
}

void zero_norm(weights::StateDict& d, const std::string& p, int64_t n) {
  d[p + ".weight"] = at::zeros({n});
  d[p + ".bias"] = at::zeros({n});
}

void zero_linear(weights::StateDict& d, const std::string& p, int64_t in, int64_t out) {
  d[p + ".weight"] = at::zeros({out, in});
  d[p + ".bias"] = at::zeros({out});
}

void zero_residual_conv(weights::StateDict& d, const std::string& p, const SwinConfig& c) {
  if (!c.three_conv) return zero_conv(d, p, c.embed, c.embed, 3);
  zero_conv(d, p + ".0", c.embed, c.embed / 4, 3);
  zero_conv(d, p + ".2", c.embed / 4, c.embed / 4, 1);
  zero_conv(d, p + ".4", c.embed / 4, c.embed, 3);
}

void zero_swin_tail(weights::StateDict& d, const SwinConfig& c) {
  zero_norm(d, "norm", c.embed);
  zero_residual_conv(d, "conv_after_body", c);
  switch (c.upsampler) {
    case kPixelShuffle:
      zero_conv(d, "conv_before_upsample.0", c.embed, 64, 3);
      if (c.scale == 3) zero_conv(d, "upsample.0", 64, 9 * 64, 3);
      for (int64_t s = 1, i = 0; c.scale != 3 && s < c.scale; s *= 2, i += 2) zero_conv(d, "upsample." + std::to_string(i), 64, 256, 3);
      zero_conv(d, "conv_last", 64, c.in, 3);
      break;
    case kDirect: zero_conv(d, "upsample.0", c.embed, c.in * c.scale * c.scale, 3); break;
    case kNearestConv:
      zero_conv(d, "conv_before_upsample.0", c.embed, 64, 3);
      for (int64_t s = 1, i = 1; s < c.scale; s *= 2, ++i) zero_conv(d, "conv_up" + std::to_string(i), 64, 64, 3);
      zero_conv(d, "conv_hr", 64, 64, 3);
      zero_conv(d, "conv_last", 64, c.in, 3);
      break;
    case kNone: zero_conv(d, "conv_last", c.embed, c.in, 3); break;
  }
}

void expect_swin_detected_as(const models::DetectedArch& d, const SwinConfig& c, const std::string& arch) {
  EXPECT_EQ(d.arch, arch);
  EXPECT_EQ(d.scale, c.scale);
  EXPECT_EQ(d.in_channels, c.in);
  EXPECT_EQ(d.out_channels, c.in);
  EXPECT_EQ(d.params.get("embed_dim", 0), double(c.embed));
  EXPECT_EQ(d.params.get("layers", 0), double(c.layers));
  EXPECT_EQ(d.params.get("depth", 0), double(c.depth));
  EXPECT_EQ(d.params.get("heads", 0), double(c.heads));
  EXPECT_EQ(d.params.get("window_size", 0), double(c.window));
  EXPECT_EQ(d.params.get("mlp_hidden", 0), double(c.hidden));
  EXPECT_EQ(d.params.get("upsampler", -1), double(c.upsampler));
  EXPECT_EQ(d.params.get("three_conv", -1), c.three_conv ? 1.0 : 0.0);
  EXPECT_EQ(d.params.get("img_range", 0), c.window == 7 ? 255.0 : 1.0);
}

void expect_swin_reference_matches_upstream(const std::string& name, const SwinConfig& c, const std::string& arch) {
  SCOPED_TRACE(name);
  infer::configure_cpu_threads(0);
  const auto pth = arch_reference_dir() / (name + ".pth");
  const weights::StateDict io = weights::load_weights(arch_reference_dir() / (name + ".ref.safetensors"));
  const auto d = models::detect(weights::load_weights(pth), pth.string());
  ASSERT_TRUE(d);
  expect_swin_detected_as(*d, c, arch);
  auto model = models::load_model(pth);
  EXPECT_EQ(model->info().size_multiple, c.window);
  const at::Tensor y = infer::upscale_tiled(*model, io.at("input"), {.tile = 0});
  ASSERT_EQ(y.sizes(), io.at("output").sizes());
  const double db = psnr_in_range(y, io.at("output"));
  std::cout << name << ": fp32 vs upstream " << db << " dB\n";
  EXPECT_GE(db, 80.0);
}

void expect_swin_tiles_and_bf16_match(const std::string& name) {
  SCOPED_TRACE(name);
  infer::configure_cpu_threads(0);
  auto model = models::load_model(arch_reference_dir() / (name + ".pth"));
  EXPECT_EQ(model->info().tile_overlap, 32);
  const at::Tensor frame = real_frame(101, 75).squeeze(0);
  const at::Tensor whole = infer::upscale_tiled(*model, frame, {.tile = 0});
  const double tiled_db = psnr_in_range(infer::upscale_tiled(*model, frame, {.tile = 40, .overlap = -1}), whole);
  const double seams_db = psnr_in_range(infer::upscale_tiled(*model, frame, {.tile = 40, .overlap = 0}), whole);
  model->to(c10::kCPU, at::kBFloat16);
  const at::Tensor bf16 = infer::upscale_tiled(*model, frame.to(at::kBFloat16), {.tile = 0}).to(at::kFloat);
  const double bf16_db = psnr_in_range(bf16, whole);
  std::cout << name << ": tiled (40 px, 32 px context) vs whole " << tiled_db << " dB, " << seams_db
            << " dB without context; bf16 vs fp32 " << bf16_db << " dB\n";
  EXPECT_LT(seams_db, 50.0) << "tiles without context should show seams: the check below would catch a wrong overlap";
  EXPECT_GE(tiled_db, 50.0);
  EXPECT_GE(bf16_db, 40.0);
}

}  // namespace framelift::test
