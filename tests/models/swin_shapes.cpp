#include "models/swin_shapes.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

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

}  // namespace framelift::test
