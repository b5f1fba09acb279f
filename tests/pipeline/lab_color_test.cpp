// The Lab conversion `colorize` works in (pipeline/lab_color.h), against published reference
// values (CIE L*a*b* of sRGB colours under D65, as colour-science tools give them, to the 0.1 that
// OpenCV's rounded constants allow), its own inverse on every 8-bit grey and random colours, and
// the luma transfer that keeps a frame's brightness while it takes another picture's colour.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "pipeline/lab_color.h"

namespace framelift::pipeline {
namespace {

at::Tensor pixel(double r, double g, double b) { return at::tensor({float(r), float(g), float(b)}).view({3, 1, 1}); }

TEST(LabColor, SrgbColoursGiveTheirPublishedLab) {
  struct Case {
    double rgb[3], lab[3];
  };
  // sRGB (D65) -> CIE L*a*b*: white, mid grey (128), black, and the three primaries.
  const Case cases[] = {{{1, 1, 1}, {100, 0, 0}},
                        {{128 / 255.0, 128 / 255.0, 128 / 255.0}, {53.59, 0, 0}},
                        {{0, 0, 0}, {0, 0, 0}},
                        {{1, 0, 0}, {53.24, 80.09, 67.20}},
                        {{0, 1, 0}, {87.73, -86.18, 83.18}},
                        {{0, 0, 1}, {32.30, 79.19, -107.86}}};
  for (const Case& c : cases) {
    const at::Tensor lab = srgb_to_lab(pixel(c.rgb[0], c.rgb[1], c.rgb[2]));
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(lab[i].item<double>(), c.lab[i], 0.15) << c.rgb[0] << "," << c.rgb[1] << "," << c.rgb[2] << " channel " << i;
  }
}

TEST(LabColor, LabBackToSrgbIsTheInverse) {
  // Every 8-bit grey, and random colours (a batch, as the stage's network path passes).
  const at::Tensor greys = (at::arange(256, at::kFloat) / 255).view({1, 1, 256}).expand({3, 1, 256});
  EXPECT_LT((lab_to_srgb(srgb_to_lab(greys)) - greys).abs().max().item<double>(), 1e-4);
  at::manual_seed(7);
  const at::Tensor colours = at::rand({2, 3, 16, 16});
  EXPECT_LT((lab_to_srgb(srgb_to_lab(colours)) - colours).abs().max().item<double>(), 1e-4);
  // Lightness alone (a = b = 0) is a grey: equal channels.
  const at::Tensor grey = lab_to_srgb(at::stack({at::full({4, 4}, 61.0), at::zeros({4, 4}), at::zeros({4, 4})}));
  EXPECT_LT((grey[0] - grey[1]).abs().max().item<double>(), 1e-4);
  EXPECT_LT((grey[2] - grey[1]).abs().max().item<double>(), 1e-4);
}

TEST(LabColor, TheLumaOfTheSourceIsKeptAndTheChromaOfTheColourWherePossible) {
  at::manual_seed(11);
  const double kr = 0.2126, kb = 0.0722;
  const auto luma = [&](const at::Tensor& t) { return t[0] * kr + t[1] * (1 - kr - kb) + t[2] * kb; };
  const at::Tensor source = at::rand({3, 24, 32}), colour = at::rand({3, 24, 32});
  const at::Tensor out = with_luma_of(colour, source, kr, kb);
  EXPECT_LT((luma(out) - luma(source)).abs().max().item<double>(), 1e-6);
  EXPECT_GE(out.min().item<double>(), -1e-6);
  EXPECT_LE(out.max().item<double>(), 1 + 1e-6);
  // Where the shift fits, the chroma (offsets from luma) is the colour's exactly.
  const at::Tensor d_out = out - luma(out).unsqueeze(0), d_colour = colour - luma(colour).unsqueeze(0);
  const at::Tensor fits = ((colour - luma(colour).unsqueeze(0) + luma(source).unsqueeze(0)).amin(0) >= 0) &
                          ((colour - luma(colour).unsqueeze(0) + luma(source).unsqueeze(0)).amax(0) <= 1);
  ASSERT_GT(fits.sum().item<int64_t>(), 100);
  EXPECT_LT((d_out - d_colour).abs().amax(0).masked_select(fits).max().item<double>(), 1e-6);
  // A grey colour leaves the source's grey as it is.
  const at::Tensor grey_source = at::rand({1, 8, 8}).expand({3, 8, 8});
  EXPECT_LT((with_luma_of(at::full({3, 8, 8}, 0.3), grey_source, kr, kb) - grey_source).abs().max().item<double>(), 1e-6);
}

}  // namespace
}  // namespace framelift::pipeline
