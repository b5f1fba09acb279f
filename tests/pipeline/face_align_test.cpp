// The alignment and paste-back of the faces stage (pipeline/face_align.h), against what follows
// from facexlib's arithmetic worked by hand: the similarity fit recovers a known transform; a crop
// at an integer shift is the frame's pixels (grey outside); and a face pasted at an integer shift
// has the footprint facexlib's square map gives it (a 64 px face: footprint eroded by one pixel
// on its top and left, w_edge = 63 / 20 = 3, centre eroded by a 6 x 6 box, blurred by a 7 x 7
// Gaussian), so the face is taken whole 7 px inside its square and the frame kept bit for bit
// outside it.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

#include "pipeline/face_align.h"

namespace framelift::pipeline {
namespace {

TEST(FaceAlign, TemplateIsFacexlibsScaledToTheFaceSize) {
  const Landmarks5 t512 = face_template(512), t64 = face_template(64);
  EXPECT_FLOAT_EQ(t512[0], 192.98138f);
  EXPECT_FLOAT_EQ(t512[9], 371.15118f);
  for (size_t i = 0; i < t64.size(); ++i) EXPECT_NEAR(t64[i], t512[i] / 8.0, 1e-4);
}

TEST(FaceAlign, FitRecoversAKnownSimilarity) {
  const Landmarks5 from = face_template(512);
  const Similarity truth{0.6 * std::cos(0.3), 0.6 * std::sin(0.3), 41.5, -12.25};
  Landmarks5 to{};
  for (int i = 0; i < 5; ++i) {
    const auto [x, y] = truth.apply(from[2 * i], from[2 * i + 1]);
    to[2 * i] = float(x), to[2 * i + 1] = float(y);
  }
  const Similarity fit = fit_similarity(from, to);
  EXPECT_NEAR(fit.a, truth.a, 1e-6);
  EXPECT_NEAR(fit.b, truth.b, 1e-6);
  EXPECT_NEAR(fit.tx, truth.tx, 1e-3);
  EXPECT_NEAR(fit.ty, truth.ty, 1e-3);
  const Similarity back = fit.inverse();
  const auto [x, y] = back.apply(fit.apply(10, 20)[0], fit.apply(10, 20)[1]);
  EXPECT_NEAR(x, 10, 1e-9);
  EXPECT_NEAR(y, 20, 1e-9);
}

TEST(FaceAlign, CropAtAnIntegerShiftIsTheFramesPixelsAndGreyOutside) {
  at::manual_seed(3);
  const at::Tensor frame = at::rand({3, 50, 70});
  // Frame pixel (x, y) -> crop (x - 30, y + 10): the crop's top 10 rows lie above the frame.
  const Similarity to_crop{1, 0, -30, 10};
  const at::Tensor crop = warp_face(frame, to_crop, 64);
  ASSERT_EQ(crop.sizes(), (std::vector<int64_t>{3, 64, 64}));
  // Rows 10..59 of the crop are frame rows 0..49; columns 0..39 are frame columns 30..69.
  // To the float rounding of the sampling grid (coordinates to ~1e-5 px).
  EXPECT_LT((crop.narrow(1, 10, 50).narrow(2, 0, 40) - frame.narrow(2, 30, 40)).abs().max().item<double>(), 1e-4);
  const at::Tensor grey = at::tensor({132.f, 133.f, 135.f}).view({3, 1, 1}) / 255;
  EXPECT_LT((crop.narrow(1, 0, 9) - grey).abs().max().item<double>(), 1e-6);
  EXPECT_LT((crop.narrow(2, 41, 23) - grey).abs().max().item<double>(), 1e-6);
}

TEST(FaceAlign, PasteFollowsFacexlibsSquareMap) {
  at::manual_seed(5);
  const at::Tensor input = at::rand({3, 100, 120});
  const at::Tensor face = at::rand({3, 64, 64});
  // The crop's pixel (u, v) came from frame (u + 20, v + 15).
  const Similarity to_crop{1, 0, -20, -15};
  at::Tensor out = input.clone();
  paste_face(out, face, to_crop);
  // Inside: whole where the soft mask is 1 (7 px in from the square's top-left, 6 from its far edge).
  EXPECT_LT((out.narrow(1, 15 + 7, 64 - 13).narrow(2, 20 + 7, 64 - 13) - face.narrow(1, 7, 64 - 13).narrow(2, 7, 64 - 13)).abs().max().item<double>(), 1e-5);
  // Outside the eroded centre (x0 + 4 .. x0 + 61 before the blur widens it by 3): the input, bit for bit.
  at::Tensor changed = (out != input).any(0);
  const at::Tensor rows = changed.any(1).nonzero(), cols = changed.any(0).nonzero();
  ASSERT_GT(rows.numel(), 0);
  EXPECT_GE(rows.min().item<int64_t>(), 15 + 1);
  EXPECT_LE(rows.max().item<int64_t>(), 15 + 63);
  EXPECT_GE(cols.min().item<int64_t>(), 20 + 1);
  EXPECT_LE(cols.max().item<int64_t>(), 20 + 63);
  // And the feather is a real blend, not a cut: a pixel 2 px inside the eroded centre's edge is
  // strictly between the input and the face.
  const double a = input[0][15 + 5][20 + 30].item<double>(), b = face[0][5][30].item<double>(), o = out[0][15 + 5][20 + 30].item<double>();
  EXPECT_GT(std::abs(o - a), 1e-4);
  EXPECT_GT(std::abs(o - b), 1e-4);
}

TEST(FaceAlign, AFacePartlyOutsideTheFrameIsPastedWhereItIs) {
  at::manual_seed(6);
  const at::Tensor input = at::rand({3, 40, 40});
  at::Tensor out = input.clone();
  paste_face(out, at::rand({3, 64, 64}), Similarity{1, 0, 30, 30});  // crop (0, 0) is frame (-30, -30)
  EXPECT_FALSE(at::equal(out, input));
  EXPECT_TRUE(at::equal(out.narrow(1, 34, 6), input.narrow(1, 34, 6)));
  // Entirely outside: nothing changes.
  at::Tensor untouched = input.clone();
  paste_face(untouched, at::rand({3, 64, 64}), Similarity{1, 0, 500, 500});
  EXPECT_TRUE(at::equal(untouched, input));
}

TEST(FaceAlign, WarpThenPasteOfTheCropItselfChangesLittle) {
  // A rotated, scaled crop restored as itself and pasted back: bilinear there and back again on
  // a smooth picture, so the frame changes by little inside and not at all outside.
  const at::Tensor ys = at::linspace(0, 1, 90).view({1, 90, 1}).expand({3, 90, 110});
  const at::Tensor xs = at::linspace(0, 1, 110).view({1, 1, 110}).expand({3, 90, 110});
  const at::Tensor input = (0.5 + 0.4 * at::sin(xs * 6 + ys * 3)).contiguous();
  const Similarity to_crop{0.9 * std::cos(0.2), 0.9 * std::sin(0.2), -10, -5};
  const at::Tensor crop = warp_face(input, to_crop, 64);
  at::Tensor out = input.clone();
  paste_face(out, crop, to_crop);
  // Inside the frame's 2 px border: the crop's pixels there blend in upstream's grey from outside.
  const at::Tensor diff = (out - input).abs().narrow(1, 2, 86).narrow(2, 2, 106);
  EXPECT_LT(diff.max().item<double>(), 0.01) << "at " << (diff.flatten().argmax().item<int64_t>() % (86 * 106)) / 106 << "," << (diff.flatten().argmax().item<int64_t>() % 106);
  EXPECT_FALSE(at::equal(out, input));
}

}  // namespace
}  // namespace framelift::pipeline
