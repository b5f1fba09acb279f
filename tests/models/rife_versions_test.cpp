// RIFE 4.22 to 4.26 against the upstream networks (HolyWu/vs-rife's per-version IFNet files, which
// are Practical-RIFE's, run on Debian's python3-torch by tests/data/arch/make_references.py with
// seeded weights and narrow blocks): the committed checkpoints in the 4.22 layout (encoder to 8
// features, 4 blocks) and the 4.25 layout (4 features, 5 blocks from 1/16) give upstream's frame at
// t = 0.5 and 0.25 within 80 dB in fp32, on real frames with real motion. Every published version
// is told by its shapes (block scales, padding multiple); bf16 stays within 40 dB of fp32.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <iostream>

#include "arch/declaration.h"
#include "models/arch_support.h"
#include "models/frame_interpolator.h"
#include "models/rife_native.h"
#include "arch/rife_versions.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;

namespace {

// Zeros in Practical-RIFE's 4.22+ layout: encoder `hidden` -> `features`, blocks of `widths`.
StateDict rife_shapes(int64_t hidden, int64_t features, const std::vector<int>& widths) {
  StateDict d;
  auto conv = [&](const std::string& p, int64_t i, int64_t o, int64_t k) {
    d[p + ".weight"] = at::zeros({o, i, k, k});
    d[p + ".bias"] = at::zeros({o});
  };
  auto deconv = [&](const std::string& p, int64_t i, int64_t o) {
    d[p + ".weight"] = at::zeros({i, o, 4, 4});
    d[p + ".bias"] = at::zeros({o});
  };
  conv("encode.cnn0", 3, hidden, 3);
  conv("encode.cnn1", hidden, hidden, 3);
  conv("encode.cnn2", hidden, hidden, 3);
  deconv("encode.cnn3", hidden, features);
  for (size_t i = 0; i < widths.size(); ++i) {
    const std::string b = "block" + std::to_string(i);
    const int64_t c = widths[i], in = i == 0 ? 7 + 2 * features : 8 + 4 + 2 * features + 8;
    conv(b + ".conv0.0.0", in, c / 2, 3);
    conv(b + ".conv0.1.0", c / 2, c, 3);
    for (int j = 0; j < 8; ++j) {
      conv(b + ".convblock." + std::to_string(j) + ".conv", c, c, 3);
      d[b + ".convblock." + std::to_string(j) + ".beta"] = at::ones({1, c, 1, 1});
    }
    deconv(b + ".lastconv.0", c, 4 * 13);
  }
  return d;
}

TEST(RifeVersions, MatchTheUpstreamNetworksOnTheCommittedReferences) {
  struct Ref {
    const char* name;
    int multiple;
  };
  for (const Ref ref : {Ref{"rife-4.22-narrow", 32}, Ref{"rife-4.25-narrow", 64}}) {
    SCOPED_TRACE(ref.name);
    const fs::path pth = ft::arch_reference_dir() / (std::string(ref.name) + ".pth");
    const StateDict io = framelift::weights::load_weights(ft::arch_reference_dir() / (std::string(ref.name) + ".ref.safetensors"));
    auto rife = fm::open_interpolator(pth.string());
    EXPECT_EQ(rife->info().arch, "rife");
    EXPECT_EQ(rife->info().version, "4.7+ (unrecognised widths)");  // narrow blocks: no published row
    EXPECT_EQ(rife->info().size_multiple, ref.multiple);
    for (const char* t : {"t0.5", "t0.25"}) {
      const at::Tensor y = rife->interpolate(io.at("img0"), io.at("img1"), t == std::string("t0.5") ? 0.5 : 0.25);
      ASSERT_EQ(y.sizes(), io.at(t).sizes());
      const double db = ft::psnr_in_range(y, io.at(t));
      std::cout << ref.name << " " << t << ": fp32 vs upstream " << db << " dB\n";
      EXPECT_GE(db, 80.0);
    }
    // bf16 (the warp grid kept in fp32, models/backward_warp.h) against fp32.
    const at::Tensor fp32 = rife->interpolate(io.at("img0"), io.at("img1"), 0.5);
    rife->to(c10::kCPU, at::kBFloat16);
    const at::Tensor bf16 = rife->interpolate(io.at("img0"), io.at("img1"), 0.5).to(at::kFloat);
    const double bf16_db = ft::psnr_in_range(bf16, fp32);
    std::cout << ref.name << ": bf16 vs fp32 " << bf16_db << " dB\n";
    EXPECT_GE(bf16_db, 40.0);
  }
}

TEST(RifeVersions, EveryPublishedVersionIsToldByItsShapes) {
  struct Published {
    const char* version;
    int64_t hidden, features;
    std::vector<int> widths;
    int multiple;
    std::vector<double> divisors;
  };
  // vs-rife's IFNet_HDv3_v4_{22,22_lite,25,25_lite,25_heavy,26_heavy}.py and its modulo table.
  for (const Published& p : {Published{"4.22 / 4.23", 32, 8, {256, 192, 96, 48}, 32, {8, 4, 2, 1}},
                             Published{"4.22 lite", 16, 4, {192, 128, 64, 32}, 32, {8, 4, 2, 1}},
                             Published{"4.25 / 4.26", 16, 4, {192, 128, 96, 64, 32}, 64, {16, 8, 4, 2, 1}},
                             Published{"4.25 lite", 16, 4, {192, 128, 96, 64, 24}, 128, {32, 16, 8, 4, 1}},
                             Published{"4.25 heavy", 16, 4, {384, 256, 192, 128, 64}, 64, {16, 8, 4, 2, 1}},
                             Published{"4.26 heavy", 16, 16, {192, 128, 96, 64, 32}, 64, {16, 8, 4, 2, 1}}}) {
    SCOPED_TRACE(p.version);
    const framelift::arch::RifeVersion v = framelift::arch::rife_version_for(int(p.features), p.widths);
    EXPECT_EQ(v.name, p.version);
    EXPECT_EQ(v.modulo, p.multiple);
    EXPECT_EQ(v.divisors, p.divisors);
    const StateDict dict = rife_shapes(p.hidden, p.features, p.widths);
    // The planner's walk counts every convolution of the network: its parameters, betas aside.
    double weights = 0;
    for (const auto& [key, t] : dict)
      if (key.find(".beta") == std::string::npos) weights += double(t.numel());
    const framelift::arch::ArchCost cost = framelift::arch::cost("rife", 1, fm::rife_arch_params(dict, "flownet.pkl"));
    EXPECT_DOUBLE_EQ(cost.params, weights);
    EXPECT_EQ(cost.size_multiple, p.multiple);
    auto rife = fm::build_rife_native(dict, "flownet.pkl");
    EXPECT_EQ(rife->info().version, p.version);
    EXPECT_EQ(rife->info().size_multiple, p.multiple);
    // Zero weights: no flow, a mask of 0.5, so the middle frame is the frames' average, at odd sizes
    // padded to the multiple and cropped back.
    const at::Tensor a = at::rand({1, 3, 37, 53}), b = at::rand({1, 3, 37, 53});
    const at::Tensor y = rife->interpolate(a, b, 0.5);
    ASSERT_EQ(y.sizes(), a.sizes());
    EXPECT_LT((y - (a + b) / 2).abs().max().item<float>(), 1e-5f);
  }
}

TEST(RifeVersions, AFlowScaleBelowOnePadsToTheCoarserMultiple) {
  // 4.25 at scale 0.5 runs its 1/16 block on a quarter-size frame: frames are padded to 128.
  const StateDict io = framelift::weights::load_weights(ft::arch_reference_dir() / "rife-4.25-narrow.ref.safetensors");
  auto rife = fm::open_interpolator((ft::arch_reference_dir() / "rife-4.25-narrow.pth").string());
  const at::Tensor a = io.at("img0").narrow(3, 0, 100), b = io.at("img1").narrow(3, 0, 100);
  const at::Tensor half = rife->interpolate(a, b, 0.5, 0.5), full = rife->interpolate(a, b, 0.5, 1.0);
  ASSERT_EQ(half.sizes(), a.sizes());
  // Coarser flow, the same picture: close to full-scale flow, not equal to it.
  const double db = ft::psnr_in_range(half, full);
  std::cout << "rife-4.25-narrow: flow scale 0.5 vs 1 " << db << " dB\n";
  EXPECT_GT(db, 20.0);
  EXPECT_LT(db, 80.0);
}

}  // namespace
