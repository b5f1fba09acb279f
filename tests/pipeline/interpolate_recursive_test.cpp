// interpolate:recursive=1 (FILM's tools' way) on two real frames with FILM's seeded reference
// weights: each output frame is the network's from the two nearest frames made so far, nearest
// t = 0.5 first. Checked against the interpolator called by hand: factor 4 is repeated midpoints,
// factor 3 takes 1/3 from the anchors, then 2/3 as the midpoint of 1/3 and the next anchor.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "models/frame_interpolator.h"
#include "pipeline/stage_registry.h"
#include "support/test_paths.h"
#include "weights/load_weights.h"

namespace framelift::pipeline {
namespace {

namespace fs = std::filesystem;

const fs::path kWeights = test::source_dir() / "tests" / "data" / "arch" / "film-p5-f8-fp16.pth";

struct Pair {
  at::Tensor a, b;  // [3, H, W]
};

Pair real_pair() {
  const auto io = weights::load_weights(test::source_dir() / "tests" / "data" / "arch" / "film-p5-f8-fp16.ref.safetensors");
  return {io.at("img0").squeeze(0), io.at("img1").squeeze(0)};
}

std::vector<Frame> run(int factor, bool recursive, const Pair& p) {
  auto stage = make_stage({"interpolate", StageOptions("interpolate", {{"model", kWeights.string()},
                                                                         {"factor", std::to_string(factor)},
                                                                         {"scene", "0"},
                                                                         {"recursive", recursive ? "1" : "0"},
                                                                         {"device", "cpu"},
                                                                         {"precision", "fp32"}})});
  media::VideoFormat f;
  f.width = int(p.a.size(2));
  f.height = int(p.a.size(1));
  f.time_base = {1, 25};
  f.frame_rate = {25, 1};
  f.start_pts = 0;
  stage->configure(f);
  std::vector<Frame> out;
  const auto emit = [&](Frame frame) { out.push_back(std::move(frame)); };
  stage->push({p.a.clone(), 0}, emit);
  stage->push({p.b.clone(), 1}, emit);
  return out;
}

// The network by hand, clamped as the stage's frames are.
at::Tensor net(models::FrameInterpolator& m, const at::Tensor& a, const at::Tensor& b, double t) {
  return m.interpolate(a.unsqueeze(0), b.unsqueeze(0), t).squeeze(0).clamp(0, 1);
}

TEST(InterpolateRecursive, FactorFourIsRepeatedMidpoints) {
  const Pair p = real_pair();
  auto m = models::open_interpolator(kWeights.string());
  const std::vector<Frame> out = run(4, true, p);
  ASSERT_EQ(out.size(), 4u);
  const at::Tensor mid = net(*m, p.a, p.b, 0.5);
  EXPECT_TRUE(out[0].image.equal(p.a));
  EXPECT_TRUE(out[2].image.allclose(mid, 0, 1e-6));
  EXPECT_TRUE(out[1].image.allclose(net(*m, p.a, mid, 0.5), 0, 1e-6));
  EXPECT_TRUE(out[3].image.allclose(net(*m, mid, p.b, 0.5), 0, 1e-6));
  // Not the direct mode's frame at t = 0.25.
  EXPECT_FALSE(out[1].image.allclose(run(4, false, p)[1].image, 0, 1e-3));
}

TEST(InterpolateRecursive, FactorThreeTakesTheNearestPairFirst) {
  const Pair p = real_pair();
  auto m = models::open_interpolator(kWeights.string());
  const std::vector<Frame> out = run(3, true, p);
  ASSERT_EQ(out.size(), 3u);
  const at::Tensor third = net(*m, p.a, p.b, 1.0 / 3);
  EXPECT_TRUE(out[1].image.allclose(third, 0, 1e-6));
  EXPECT_TRUE(out[2].image.allclose(net(*m, third, p.b, 0.5), 0, 1e-6));
  EXPECT_EQ(out[2].pts, 2);
}

}  // namespace
}  // namespace framelift::pipeline
