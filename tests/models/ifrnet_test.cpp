// IFRNet against upstream (ltkong218/IFRNet's Model.inference, run on Debian's python3-torch by
// tests/data/arch/make_references.py with seeded weights in the published S, base and L widths):
// on real frames with real motion, cropped to an odd 61x45 (padded to 64x48), framelift's frame
// at t = 0.5 and 0.3 is upstream's within 50 dB in fp32 (measured 137-141 dB); bf16 stays within
// the tolerance measured below. L's checkpoint (39 MB) is not committed: its case runs where the script has written it.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <iostream>
#include <map>

#include "arch/declaration.h"
#include "models/arch_support.h"
#include "models/frame_interpolator.h"
#include "models/ifrnet.h"
#include "models/rife_native.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;

namespace {

struct Variant {
  const char* file;     // tests/data/arch/FILE.pth, FILE.ref.safetensors
  const char* variant;  // what detection names it
};
constexpr Variant kVariants[] = {{"ifrnet-s", "S"}, {"ifrnet-base", "base"}, {"ifrnet-l", "L"}};

// bf16 against fp32 on these frames: measured 50.4-52.7 dB over the variants and timesteps
// (S 50.4/51.5, base 50.9/51.6, L 52.3/52.7 at t = 0.5/0.3; the warp grids stay fp32,
// models/backward_warp.h). fp32 against upstream: 137-141 dB.
constexpr double kBf16Db = 45.0;

fs::path reference(const Variant& v, const char* ext) { return ft::arch_reference_dir() / (std::string(v.file) + ext); }

TEST(Ifrnet, MatchesUpstreamAtTwoTimestepsOnAnOddSize) {
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(v.file);
    if (!fs::exists(reference(v, ".pth"))) {
      std::cout << v.file << ": not written (make_references.py --ifrnet DIR " << v.file << "), skipped\n";
      continue;
    }
    const StateDict io = framelift::weights::load_weights(reference(v, ".ref.safetensors"));
    auto net = fm::open_interpolator(reference(v, ".pth").string());
    EXPECT_EQ(net->info().arch, "ifrnet");
    EXPECT_EQ(net->info().version, v.variant);
    EXPECT_EQ(net->info().size_multiple, 16);
    std::map<double, at::Tensor> fp32;
    for (const auto& [key, t] : {std::pair{"t0.5", 0.5}, std::pair{"t0.3", 0.3}}) {
      const at::Tensor y = net->interpolate(io.at("img0"), io.at("img1"), t);
      ASSERT_EQ(y.sizes(), io.at(key).sizes());
      const double db = ft::psnr(y, io.at(key));
      std::cout << v.file << " " << key << ": fp32 vs upstream " << db << " dB\n";
      EXPECT_GE(db, 50.0);
      fp32[t] = y;
    }
    net->to(c10::kCPU, at::kBFloat16);
    for (const auto& [t, y] : fp32) {
      const at::Tensor bf16 = net->interpolate(io.at("img0"), io.at("img1"), t).to(at::kFloat);
      const double db = ft::psnr(bf16, y);
      std::cout << v.file << " t" << t << ": bf16 vs fp32 " << db << " dB\n";
      EXPECT_GE(db, kBf16Db);
    }
  }
}

TEST(Ifrnet, TheTimestepMovesThePicture) {
  // Guards the agreement above: were t ignored, t = 0.3 would come out as 0.5's frame.
  const StateDict io = framelift::weights::load_weights(reference(kVariants[0], ".ref.safetensors"));
  EXPECT_LT(ft::psnr(io.at("t0.3"), io.at("t0.5")), 30.0);
}

TEST(Ifrnet, TheRifeLoaderRefusesItAndItsDetectorRefusesRife) {
  const fs::path file = reference(kVariants[0], ".pth");
  EXPECT_THROW(fm::build_rife_native(framelift::weights::load_weights(file), file.string()), framelift::Error);
  for (const char* rife : {"rife-4.22-narrow.pth", "rife-4.25-narrow.pth"}) {
    const fs::path f = ft::arch_reference_dir() / rife;
    EXPECT_FALSE(fm::detect_ifrnet(framelift::weights::load_weights(f), f.string())) << rife;
  }
}

TEST(Ifrnet, AScaleShrinksTheFramesAndPadsToTheCoarserMultiple) {
  const StateDict io = framelift::weights::load_weights(reference(kVariants[0], ".ref.safetensors"));
  auto net = fm::open_interpolator(reference(kVariants[0], ".pth").string());
  const at::Tensor half = net->interpolate(io.at("img0"), io.at("img1"), 0.5, 0.5);
  ASSERT_EQ(half.sizes(), io.at("img0").sizes());
  EXPECT_TRUE(half.isfinite().all().item<bool>());
  EXPECT_GE(half.min().item<float>(), 0.0f);
  EXPECT_LE(half.max().item<float>(), 1.0f);
  try {
    net->interpolate(io.at("img0"), io.at("img1"), 0.5, 0.3);  // 16 / 0.3 is no whole multiple
    ADD_FAILURE() << "scale 0.3 was taken";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage);
  }
}

TEST(Ifrnet, AChangedShapeIsRefusedNamingTheTensor) {
  const fs::path file = reference(kVariants[0], ".pth");
  StateDict dict = framelift::weights::load_weights(file);
  dict["decoder2.convblock.1.conv5.weight"] = at::zeros({3, 3, 3, 3});
  try {
    fm::build_ifrnet(dict, "test.pth");
    ADD_FAILURE() << "a wrong shape was built";
  } catch (const framelift::Error& e) {
    EXPECT_NE(std::string(e.what()).find("decoder2.convblock.1.conv5.weight"), std::string::npos) << e.what();
  }
  dict = framelift::weights::load_weights(file);
  dict["decoder1.extra.weight"] = at::zeros({1});
  EXPECT_THROW(fm::build_ifrnet(dict, "test.pth"), framelift::Error);  // a tensor the network would not use
  // Widths no network has (an untrusted file): refused by detection, before any convolution.
  for (const int64_t width : {int64_t(0), int64_t(1) << 40}) {
    dict = framelift::weights::load_weights(file);
    dict["encoder.pyramid2.0.0.weight"] = at::zeros({1, 1, 1, 1}).expand({width, 24, 3, 3});
    try {
      fm::detect_ifrnet(dict, "test.pth");
      ADD_FAILURE() << "width " << width << " was taken";
    } catch (const framelift::Error& e) {
      EXPECT_EQ(e.kind(), framelift::ErrorKind::Model);
      EXPECT_NE(std::string(e.what()).find("channels wide"), std::string::npos) << e.what();
    }
  }
}

// The planner prices each variant by its own widths: every convolution's weights counted (the
// PReLU slopes aside), S < base < L.
TEST(Ifrnet, ThePlannersWalkCountsTheWeightsAndOrdersTheVariants) {
  double previous = 0;
  for (const Variant& v : {kVariants[0], kVariants[1]}) {
    SCOPED_TRACE(v.file);
    const StateDict dict = framelift::weights::load_weights(reference(v, ".pth"));
    const auto shape = fm::detect_ifrnet(dict, v.file);
    ASSERT_TRUE(shape);
    double weights = 0;
    for (const auto& [key, t] : dict)
      if (t.dim() != 1 || key.size() < 5 || key.compare(key.size() - 5, 5, ".bias") == 0) weights += double(t.numel());
    const framelift::arch::ArchCost cost = framelift::arch::cost("ifrnet", 1, fm::ifrnet_arch_params(*shape));
    EXPECT_DOUBLE_EQ(cost.params, weights);
    EXPECT_FALSE(cost.tiled);
    EXPECT_EQ(cost.size_multiple, 16);
    EXPECT_GT(cost.macs_per_px, previous);
    previous = cost.macs_per_px;
    std::cout << v.file << ": " << cost.macs_per_px << " MACs/px, " << cost.params << " weights\n";
  }
  // L from its published widths (its checkpoint may not be here).
  fm::IfrnetShape l{{64, 96, 144, 192}, 7, {192, 288, 432, 384}, {64, 64, 64, 64}, "L"};
  const double l_macs = framelift::arch::cost("ifrnet", 1, fm::ifrnet_arch_params(l)).macs_per_px;
  std::cout << "IFRNet L: " << l_macs << " MACs/px\n";
  EXPECT_GT(l_macs, previous);
}

}  // namespace
