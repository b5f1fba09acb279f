// GFPGAN (the clean layout of v1.2-v1.4) against the upstream implementation (spandrel's
// GFPGANv1Clean run on Debian's python3-torch by tests/data/arch/make_face_references_gfpgan.py at
// a face size of 64 and 1/32 of the released widths, seeded weights, the stored noise maps
// (randomize_noise=False)): each committed checkpoint is detected from its shapes and, on a real
// 64x64 crop, restores it as upstream does within 50 dB in fp32; bf16 stays within its measured
// sensitivity. The released shapes (512, styles of 512, multiplier 2) are detected; crops of
// another size, the original GFPGANv1 layout and broken tensors are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <iostream>

#include "arch/declaration.h"
#include "infer/threads.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;

namespace {

fs::path reference_pth(const std::string& name) { return ft::arch_reference_dir() / (name + ".pth"); }

struct Layout {
  int64_t face = 512, style = 512, mlp = 8;
  double narrow = 1, multiplier = 2;
  bool sft_half = true, different_w = true;
};

// Upstream's channel table: the decoder's channels at resolution r; the U-Net's are at narrow / 2.
int64_t channels(double r, double narrow, double multiplier) {
  const double base = r <= 32 ? 512 : 256 * multiplier * 64 / r;
  return int64_t(base * narrow);
}

// Zeros in GFPGANv1Clean's layout; with `lazy`, uninitialised storage that is never touched
// (detection reads shapes: the released final_linear alone is 29M weights).
StateDict gfpgan_shapes(const Layout& g, bool lazy = false) {
  StateDict d;
  const auto t = [&](const std::string& k, std::vector<int64_t> shape) { d[k] = lazy ? at::empty(shape) : at::zeros(shape); };
  const auto conv = [&](const std::string& p, int64_t in, int64_t out, int64_t k, bool bias = true) {
    t(p + ".weight", {out, in, k, k});
    if (bias) t(p + ".bias", {out});
  };
  const auto res = [&](const std::string& p, int64_t in, int64_t out) {
    conv(p + ".conv1", in, in, 3);
    conv(p + ".conv2", in, out, 3);
    conv(p + ".skip", in, out, 1, false);
  };
  const auto u = [&](double r) { return channels(r, g.narrow * 0.5, g.multiplier); };
  const auto c = [&](double r) { return channels(r, g.narrow, g.multiplier); };
  int levels = 0;
  for (int64_t r = g.face; r > 4; r /= 2) ++levels;
  conv("conv_body_first", 3, u(double(g.face)), 1);
  for (int k = 0; k < levels; ++k) res("conv_body_down." + std::to_string(k), u(double(g.face >> k)), u(double(g.face >> (k + 1))));
  conv("final_conv", u(4), u(4), 3);
  for (int j = 0; j < levels; ++j) {
    const std::string n = std::to_string(j);
    const double r = double(8 << j);
    res("conv_body_up." + n, u(r / 2), u(r));
    conv("toRGB." + n, u(r), 3, 1);
    for (const std::string p : {"condition_scale.", "condition_shift."}) {
      conv(p + n + ".0", u(r), u(r), 3);
      conv(p + n + ".2", u(r), g.sft_half ? u(r) : 2 * u(r), 3);
    }
  }
  const int64_t f = g.style;
  t("final_linear.weight", {g.different_w ? (2 * levels + 2) * f : f, u(4) * 16});
  t("final_linear.bias", {g.different_w ? (2 * levels + 2) * f : f});
  const std::string s = "stylegan_decoder.";
  for (int i = 0; i < g.mlp; ++i) {
    t(s + "style_mlp." + std::to_string(2 * i + 1) + ".weight", {f, f});
    t(s + "style_mlp." + std::to_string(2 * i + 1) + ".bias", {f});
  }
  const auto modulated = [&](const std::string& p, int64_t in, int64_t out, int64_t k) {
    d[p + ".modulated_conv.weight"] = lazy ? at::empty({1, out, in, k, k}) : at::ones({1, out, in, k, k});
    t(p + ".modulated_conv.modulation.weight", {in, f});
    d[p + ".modulated_conv.modulation.bias"] = at::ones({in});
  };
  const auto style_conv = [&](const std::string& p, int64_t in, int64_t out) {
    modulated(p, in, out, 3);
    t(p + ".weight", {1});
    t(p + ".bias", {1, out, 1, 1});
  };
  const auto to_rgb = [&](const std::string& p, int64_t in) {
    modulated(p, in, 3, 1);
    t(p + ".bias", {1, 3, 1, 1});
  };
  t(s + "constant_input.weight", {1, c(4), 4, 4});
  style_conv(s + "style_conv1", c(4), c(4));
  to_rgb(s + "to_rgb1", c(4));
  for (int j = 0; j < levels; ++j) {
    const double r = double(8 << j);
    style_conv(s + "style_convs." + std::to_string(2 * j), c(r / 2), c(r));
    style_conv(s + "style_convs." + std::to_string(2 * j + 1), c(r), c(r));
    to_rgb(s + "to_rgbs." + std::to_string(j), c(r));
  }
  for (int i = 0; i <= 2 * levels; ++i) {
    const int64_t r = int64_t(1) << ((i + 5) / 2);
    t(s + "noises.noise" + std::to_string(i), {1, 1, r, r});
  }
  return d;
}

Layout small() {
  Layout g;
  g.face = 32;
  g.style = 8;
  g.narrow = 1.0 / 32;
  g.mlp = 2;
  return g;
}

}  // namespace

TEST(ArchGfpgan, MatchesTheUpstreamImplementationOnARealCrop) {
  framelift::infer::configure_cpu_threads(0);
  // The released layout (SFT on half the channels, a style per layer), and SFT on all channels
  // with one style for all and multiplier 1 (the 64 level narrower than the ones below).
  struct Case {
    std::string name;
    double sft_half, different_w, multiplier, style, mlp;
    double bf16_floor;  // measured 53.7 and 48.9 dB (AMD EPYC, libtorch 1.13)
  };
  for (const Case& c : {Case{"gfpgan-narrow", 1, 1, 2, 16, 8, 45}, Case{"gfpgan-narrow-full-sft", 0, 0, 1, 8, 2, 42}}) {
    SCOPED_TRACE(c.name);
    const StateDict io = framelift::weights::load_weights(ft::arch_reference_dir() / (c.name + ".ref.safetensors"));
    const auto d = fm::detect(framelift::weights::load_weights(reference_pth(c.name)), reference_pth(c.name).string());
    ASSERT_TRUE(d);
    EXPECT_EQ(d->arch, "gfpgan");
    EXPECT_EQ(d->scale, 1);
    EXPECT_EQ(d->params.get("face_size", 0), 64.0);
    EXPECT_EQ(d->params.get("num_style_feat", 0), c.style);
    EXPECT_EQ(d->params.get("width", 0), 16.0);
    EXPECT_EQ(d->params.get("channel_multiplier", 0), c.multiplier);
    EXPECT_EQ(d->params.get("sft_half", -1), c.sft_half);
    EXPECT_EQ(d->params.get("different_w", -1), c.different_w);
    EXPECT_EQ(d->params.get("num_mlp", 0), c.mlp);

    auto model = fm::load_model(reference_pth(c.name));
    EXPECT_FALSE(model->info().tiled);
    EXPECT_EQ(model->info().size_multiple, 64);
    const at::Tensor& want = io.at("output");
    const at::Tensor got = model->forward(io.at("input"));
    ASSERT_EQ(got.sizes(), want.sizes());
    const double db = ft::psnr_in_range(got, want);
    // A batch of two: each crop gets its own modulated weights.
    const at::Tensor pair = model->forward(at::cat({io.at("input").flip(3), io.at("input")}, 0));
    EXPECT_GE(ft::psnr_in_range(pair.narrow(0, 1, 1), want), 50.0);
    model->to(c10::kCPU, at::kBFloat16);
    const double bf16_db = ft::psnr_in_range(model->forward(io.at("input").to(at::kBFloat16)).to(at::kFloat), want);
    std::cout << c.name << ": fp32 vs upstream " << db << " dB, bf16 " << bf16_db << " dB\n";
    EXPECT_GE(db, 50.0);
    EXPECT_GE(bf16_db, c.bf16_floor);
  }
}

TEST(ArchGfpgan, TheReleasedLayoutIsDetected) {
  // GFPGANv1.3.pth / GFPGANv1.4.pth (and v1.2's GFPGANCleanv1-NoCE-C2.pth): 512, narrow 1, multiplier 2.
  const auto d = fm::detect(gfpgan_shapes({}, true), "GFPGANv1.4.pth");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->arch, "gfpgan");
  EXPECT_EQ(d->params.get("face_size", 0), 512.0);
  EXPECT_EQ(d->params.get("num_style_feat", 0), 512.0);
  EXPECT_EQ(d->params.get("width", 0), 512.0);
  EXPECT_EQ(d->params.get("channel_multiplier", 0), 2.0);
  EXPECT_EQ(d->params.get("sft_half", 0), 1.0);
  EXPECT_EQ(d->params.get("different_w", 0), 1.0);
  EXPECT_EQ(d->params.get("num_mlp", 0), 8.0);
  const auto cost = framelift::arch::cost("gfpgan", 1, d->params);
  EXPECT_EQ(cost.size_multiple, 512);
  EXPECT_FALSE(cost.tiled);
}

TEST(ArchGfpgan, CropsOfAnotherSizeAreRefusedWithTheSizeItTakes) {
  auto model = fm::load_model(reference_pth("gfpgan-narrow"));
  for (const auto& [w, h] : {std::pair{128, 128}, std::pair{100, 100}, std::pair{64, 32}}) {
    try {
      model->forward(at::rand({1, 3, h, w}));
      ADD_FAILURE() << w << "x" << h << " was accepted";
    } catch (const framelift::Error& e) {
      EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage);
      EXPECT_NE(std::string(e.what()).find("gfpgan restores 64x64 aligned face crops, not " + std::to_string(w) + "x" + std::to_string(h)),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ArchGfpgan, TheOriginalLayoutAndBrokenTensorsAreRefusedByName) {
  EXPECT_NO_THROW(fm::build_model(gfpgan_shapes(small()), "small.pth"));
  Layout full = small();
  full.sft_half = false;
  full.different_w = false;
  EXPECT_NO_THROW(fm::build_model(gfpgan_shapes(full), "small.pth"));

  // GFPGANv1.pth: EqualConv2d in a Sequential, fused activations with biases of their own.
  StateDict d = gfpgan_shapes(small());
  d["conv_body_first.0.weight"] = d.at("conv_body_first.weight");
  d.erase("conv_body_first.weight");
  d["stylegan_decoder.style_conv1.activate.bias"] = at::zeros({16});
  ft::expect_refused(d, "original GFPGANv1");

  d = gfpgan_shapes(small());
  d["stylegan_decoder.style_convs.3.modulated_conv.weight"] = at::ones({1, 16, 15, 3, 3});
  ft::expect_refused(d, "stylegan_decoder.style_convs.3.modulated_conv.weight");
  d = gfpgan_shapes(small());
  d.erase("stylegan_decoder.noises.noise5");
  ft::expect_refused(d, "stylegan_decoder.noises.noise5");
  d = gfpgan_shapes(small());
  d["condition_shift.2.2.weight"] = at::zeros({8, 4, 3, 3});
  ft::expect_refused(d, "condition_shift.2.2.weight");
  d = gfpgan_shapes(small());
  d["final_linear.weight"] = at::zeros({9 * 8, 8 * 16});
  ft::expect_refused(d, "final_linear makes 72 style values");
  d = gfpgan_shapes(small());
  d.erase("stylegan_decoder.to_rgbs.2.bias");
  ft::expect_refused(d, "stylegan_decoder.to_rgbs.2.bias");
}
