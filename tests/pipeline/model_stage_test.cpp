// The `model` stage on synthetic frames with tiny TorchScript modules: exact values, the window's
// order and its ends, value range and colour order, masks, and the errors a bad module gets.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <fstream>

#include "pipeline/stage_registry.h"
#include "support/test_paths.h"
#include "support/torchscript_modules.h"
#include "util/error.h"

namespace framelift::pipeline {
namespace {

using test::save_torchscript;
namespace modules = test::modules;

constexpr int kWidth = 13, kHeight = 7;  // odd sizes: nothing may assume even ones

std::unique_ptr<Stage> model_stage(std::map<std::string, std::string> options) {
  options.emplace("device", "cpu");
  return make_stage({"model", StageOptions("model", options)});
}

media::VideoFormat format() {
  media::VideoFormat f;
  f.width = kWidth;
  f.height = kHeight;
  f.time_base = {1, 25};
  f.frame_rate = {25, 1};
  f.start_pts = 0;
  return f;
}

std::vector<Frame> clip(int n) {
  at::manual_seed(7);
  std::vector<Frame> frames;
  for (int i = 0; i < n; ++i) frames.push_back({at::rand({3, kHeight, kWidth}), 100 + i});
  return frames;
}

std::vector<Frame> run(Stage& stage, const std::vector<Frame>& in) {
  std::vector<Frame> out;
  auto emit = [&](Frame f) { out.push_back(std::move(f)); };
  stage.configure(format());
  for (const Frame& f : in) stage.push(Frame{f.image.clone(), f.pts}, emit);
  stage.flush(emit);
  return out;
}

std::string module_file(const std::string& name, const std::string& source) {
  static const auto dir = test::temp_dir("model-stage");
  return save_torchscript(dir / (name + ".pt"), source).string();
}

void expect_same(const at::Tensor& a, const at::Tensor& b, double tolerance = 0) {
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_LE((a - b).abs().max().item<double>(), tolerance);
}

TEST(ModelStage, IdentityKeepsEveryFrameAndTimestamp) {
  auto stage = model_stage({{"file", module_file("identity", modules::kIdentity)}});
  const auto in = clip(4);
  const auto out = run(*stage, in);
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].pts, in[i].pts);
    expect_same(out[i].image, in[i].image);
  }
  EXPECT_EQ(stage->context_frames(), 0);
}

TEST(ModelStage, ColorMatrixGivesTheIndependentlyComputedValues) {
  auto stage = model_stage({{"file", module_file("matrix", modules::kColorMatrix)}});
  const auto in = clip(2);
  const auto out = run(*stage, in);
  ASSERT_EQ(out.size(), 2u);
  for (size_t f = 0; f < in.size(); ++f)
    for (int c = 0; c < 3; ++c) {
      at::Tensor want = at::zeros({kHeight, kWidth});
      for (int j = 0; j < 3; ++j) want += modules::kMatrix[c][j] * in[f].image[j];
      expect_same(out[f].image[c], want.clamp(0, 1), 1e-6);
    }
}

// The window's frames are stacked oldest first, and the clip's edge frames stand in for the
// neighbours it does not have: a module returning one slot of the window shows which frame
// sits there, exactly.
TEST(ModelStage, WindowIsCentredOldestFirstWithEdgeFramesRepeated) {
  const auto in = clip(5);
  const int n = int(in.size());
  for (int slot = 0; slot < 5; ++slot) {
    auto file = module_file("slot" + std::to_string(slot),
                            "def forward(self, x):\n    return x[:, " + std::to_string(3 * slot) + ":" +
                                std::to_string(3 * slot + 3) + "]\n");
    auto stage = model_stage({{"file", file}, {"window", "5"}});
    EXPECT_EQ(stage->context_frames(), 2);
    const auto out = run(*stage, in);
    ASSERT_EQ(out.size(), in.size());
    for (int i = 0; i < n; ++i) {
      SCOPED_TRACE("output " + std::to_string(i) + ", slot " + std::to_string(slot));
      EXPECT_EQ(out[i].pts, in[i].pts);
      expect_same(out[i].image, in[size_t(std::clamp(i + slot - 2, 0, n - 1))].image);
    }
  }
}

TEST(ModelStage, TemporalAverageAtBothEndsAndInTheMiddle) {
  auto stage = model_stage({{"file", module_file("average3", modules::kAverage3)}, {"window", "3"}});
  const auto in = clip(4);
  const auto out = run(*stage, in);
  ASSERT_EQ(out.size(), 4u);
  auto f = [&](int i) { return in[size_t(i)].image; };
  expect_same(out[0].image, (f(0) + f(0) + f(1)) / 3.0, 1e-6);
  expect_same(out[1].image, (f(0) + f(1) + f(2)) / 3.0, 1e-6);
  expect_same(out[2].image, (f(1) + f(2) + f(3)) / 3.0, 1e-6);
  expect_same(out[3].image, (f(2) + f(3) + f(3)) / 3.0, 1e-6);
}

TEST(ModelStage, ClipShorterThanTheWindowStillGivesEveryFrame) {
  auto stage = model_stage({{"file", module_file("average3b", modules::kAverage3)}, {"window", "3"}});
  const auto in = clip(1);
  const auto out = run(*stage, in);
  ASSERT_EQ(out.size(), 1u);
  expect_same(out[0].image, in[0].image, 1e-6);
}

TEST(ModelStage, FramesLayoutIsFiveDimensional) {
  // [1, window, 3, H, W]: slot 2 is the next frame.
  auto stage = model_stage({{"file", module_file("next5d", "def forward(self, x):\n    return x[:, 2]\n")},
                            {"window", "3"},
                            {"layout", "frames"}});
  const auto in = clip(3);
  const auto out = run(*stage, in);
  ASSERT_EQ(out.size(), 3u);
  expect_same(out[0].image, in[1].image);
  expect_same(out[1].image, in[2].image);
  expect_same(out[2].image, in[2].image);
}

TEST(ModelStage, ValueRangeAndColorOrderAsDeclared) {
  const auto in = clip(1);
  // The module sees 0-255 (or -1..1): a constant at the range's middle comes back as 0.5.
  const std::vector<std::pair<std::string, std::string>> middles{{"0-255", "127.5"}, {"-1-1", "0.0"}, {"0-1", "0.5"}};
  for (const auto& [range, middle] : middles) {
    auto stage = model_stage({{"file", module_file("middle" + middle, "def forward(self, x):\n    return x * 0.0 + " + middle + "\n")},
                              {"range", range}});
    expect_same(run(*stage, in)[0].image, at::full({3, kHeight, kWidth}, 0.5), 1e-6);
    // And what goes in comes back out unchanged.
    auto identity = model_stage({{"file", module_file("identity", modules::kIdentity)}, {"range", range}});
    expect_same(run(*identity, in)[0].image, in[0].image, 1e-6);
  }
  // Channel 0 everywhere: red for rgb, blue for bgr.
  auto first = module_file("first", "def forward(self, x):\n    return x[:, 0:1].repeat(1, 3, 1, 1)\n");
  expect_same(run(*model_stage({{"file", first}}), in)[0].image, in[0].image[0].expand({3, kHeight, kWidth}));
  expect_same(run(*model_stage({{"file", first}, {"order", "bgr"}}), in)[0].image, in[0].image[2].expand({3, kHeight, kWidth}));
}

TEST(ModelStage, ScaleAndPaddingToAMultiple) {
  // x2 nearest neighbour; with multiple=8 the module gets 16x8 and the stage crops 26x14 back.
  auto file = module_file("nearest2", "def forward(self, x):\n"
                                      "    assert x.size(2) % 8 == 0 and x.size(3) % 8 == 0\n"
                                      "    return x.repeat_interleave(2, dim=2).repeat_interleave(2, dim=3)\n");
  auto stage = model_stage({{"file", file}, {"scale", "2"}, {"multiple", "8"}});
  EXPECT_EQ(stage->configure(format()).width, 2 * kWidth);
  const auto in = clip(1);
  const auto out = run(*stage, in);
  expect_same(out[0].image, in[0].image.repeat_interleave(2, 1).repeat_interleave(2, 2));
}

TEST(ModelStage, BoxMaskIsFilledAndTheRestKept) {
  auto stage = model_stage({{"file", module_file("fill", modules::kMaskedFill)}, {"box", "2,1,5,3"}});
  const auto in = clip(2);
  const auto out = run(*stage, in);
  ASSERT_EQ(out.size(), 2u);
  at::Tensor want = in[1].image.clone();
  for (int c = 0; c < 3; ++c) want[c].narrow(0, 1, 3).narrow(1, 2, 5).fill_(modules::kFill[c]);
  expect_same(out[1].image, want, 1e-6);
}

TEST(ModelStage, WrongOutputShapeIsAModelErrorNamingTheFile) {
  auto file = module_file("wrong-shape", modules::kWrongShape);
  auto stage = model_stage({{"file", file}});
  try {
    run(*stage, clip(1));
    FAIL() << "a one-channel output was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Model);
    const std::string what = e.what();
    EXPECT_NE(what.find(file), std::string::npos) << what;
    EXPECT_NE(what.find("[1, 1, 7, 13], expected [1, 3, 7, 13]"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(ModelStage, ModulesThatCannotRunAreRefusedUpFront) {
  auto expect_error = [](std::map<std::string, std::string> options, ErrorKind kind, const std::string& text) {
    try {
      model_stage(std::move(options));
      ADD_FAILURE() << "accepted; expected " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  };
  const auto fill = module_file("fill", modules::kMaskedFill), identity = module_file("identity", modules::kIdentity);
  expect_error({{"file", fill}}, ErrorKind::Model, "needs mask= or box=");
  expect_error({{"file", identity}, {"box", "0,0,2,2"}}, ErrorKind::Model, "the stage gives 2 (frames, mask)");
  const auto garbage = test::temp_dir("model-garbage") / "garbage.pt";
  std::ofstream(garbage) << "not a zip archive";
  expect_error({{"file", garbage.string()}}, ErrorKind::Model, "garbage.pt: not a TorchScript module");
  expect_error({{"file", "/nonexistent/m.pt"}}, ErrorKind::Model, "/nonexistent/m.pt: no such file");
  expect_error({}, ErrorKind::Usage, "file=PATH.pt");
  expect_error({{"file", identity}, {"window", "2"}}, ErrorKind::Usage, "window=2 must be odd");
  expect_error({{"file", identity}, {"tile", "64"}}, ErrorKind::Usage, "tile is not supported");
  expect_error({{"file", identity}, {"range", "0-65535"}}, ErrorKind::Usage, "range=0-65535 is not allowed (0-1, 0-255, -1-1)");
  expect_error({{"file", fill}, {"box", "1,2,3"}}, ErrorKind::Usage, "box=1,2,3 is not x,y,w,h");
}

TEST(ModelStage, BoxOutsideTheFrameIsRefused) {
  auto stage = model_stage({{"file", module_file("fill", modules::kMaskedFill)}, {"box", "10,0,5,5"}});
  try {
    run(*stage, clip(1));
    FAIL() << "a box past the right edge was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("lies outside the 13x7 frames"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace framelift::pipeline
