// FILM against upstream (the PyTorch port's Interpolator, dajes/frame-interpolation-pytorch, run on
// Debian's python3-torch by tests/data/arch/make_references.py --film with seeded weights): the
// published film_net layout at filters 8 (7 pyramid levels, 192x128 frames) and a 5-level variant
// whose weights are stored in fp16 as film_net_fp16.pt holds them (80x48), on real frames with real
// motion, at t = 0.5 and 0.3, and on odd sizes (11 pixels short of the multiple) padded the way
// upstream's tools pad them. fp32 within 50 dB of upstream; bf16 within the tolerance measured below.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <iostream>
#include <map>
#include <regex>

#include "arch/declaration.h"
#include "models/arch_support.h"
#include "models/film.h"
#include "models/frame_interpolator.h"
#include "models/ifrnet.h"
#include "models/interpolator_networks.h"
#include "models/rife_native.h"
#include "support/test_paths.h"
#include "support/torchscript_modules.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;

namespace {

struct Reference {
  const char* file;    // tests/data/arch/FILE.pth, FILE.ref.safetensors
  int pyramid_levels;  // not in a state dict: the reference's own
};
constexpr Reference kReferences[] = {{"film-f8", 7}, {"film-p5-f8-fp16", 5}};

// bf16 against fp32 on these frames: see the figures the test prints (docs/interpolation.md).
constexpr double kBf16Db = 35.0;

fs::path reference(const Reference& r, const char* ext) { return ft::arch_reference_dir() / (std::string(r.file) + ext); }

std::unique_ptr<fm::FrameInterpolator> open(const Reference& r, const StateDict& dict) {
  std::optional<fm::FilmShape> shape = fm::detect_film(dict, r.file);
  EXPECT_TRUE(shape);
  shape->pyramid_levels = r.pyramid_levels;
  return fm::build_film(dict, r.file, *shape);
}

// Upstream's output is not clamped; framelift's frames are. Random weights put much of it outside
// [0, 1] (measured: 21-22% inside for film-f8), where both sides are the clamp's: the PSNR is taken
// over the values inside only, and there must be enough of them.
double clamped_psnr(const at::Tensor& ours, const at::Tensor& upstream) {
  const at::Tensor inside = ((upstream > 0) & (upstream < 1)).to(at::kFloat);
  EXPECT_GT(inside.mean().item<double>(), 0.15) << "too little of the reference is inside (0, 1)";
  const double mse = ((ours - upstream).pow(2) * inside).sum().item<double>() / inside.sum().item<double>();
  return mse == 0 ? 200 : 10 * std::log10(1 / mse);
}

TEST(Film, MatchesUpstreamAtTwoTimestepsAndOnAnOddSize) {
  for (const Reference& r : kReferences) {
    SCOPED_TRACE(r.file);
    const StateDict io = framelift::weights::load_weights(reference(r, ".ref.safetensors"));
    auto net = open(r, framelift::weights::load_weights(reference(r, ".pth")));
    EXPECT_EQ(net->info().arch, "film");
    EXPECT_EQ(net->info().size_multiple, 1 << (r.pyramid_levels - 1));
    std::map<std::string, at::Tensor> fp32;
    for (const auto& [key, t] : {std::pair{"t0.5", 0.5}, std::pair{"t0.3", 0.3}}) {
      const at::Tensor y = net->interpolate(io.at("img0"), io.at("img1"), t);
      ASSERT_EQ(y.sizes(), io.at(key).sizes());
      const double db = clamped_psnr(y, io.at(key));
      std::cout << r.file << " " << key << ": fp32 vs upstream " << db << " dB\n";
      EXPECT_GE(db, 50.0);
      fp32[key] = y;
    }
    const at::Tensor odd = net->interpolate(io.at("odd_img0"), io.at("odd_img1"), 0.5);
    ASSERT_EQ(odd.sizes(), io.at("odd_t0.5").sizes());
    const double odd_db = clamped_psnr(odd, io.at("odd_t0.5"));
    std::cout << r.file << " odd " << odd.size(3) << "x" << odd.size(2) << " t0.5: fp32 vs upstream " << odd_db << " dB\n";
    EXPECT_GE(odd_db, 50.0);
    net->to(c10::kCPU, at::kBFloat16);
    for (const auto& [key, y] : fp32) {
      const double t = key == "t0.5" ? 0.5 : 0.3;
      const at::Tensor bf16 = net->interpolate(io.at("img0"), io.at("img1"), t).to(at::kFloat);
      const double db = ft::psnr(bf16, y);
      std::cout << r.file << " " << key << ": bf16 vs fp32 " << db << " dB\n";
      EXPECT_GE(db, kBf16Db);
    }
  }
}

TEST(Film, TheTimestepMovesThePicture) {
  // Guards the agreement above: were t ignored (as release v1.0.0's code does), t = 0.3 would come
  // out as 0.5's frame.
  const StateDict io = framelift::weights::load_weights(reference(kReferences[0], ".ref.safetensors"));
  EXPECT_LT(ft::psnr(io.at("t0.3").clamp(0, 1), io.at("t0.5").clamp(0, 1)), 30.0);
}

// Release v1.0.0's files name the convolutions without activation "<p>.weight" (v1.0.2: "<p>.0.weight"):
// the same weights under those names give the same frame.
TEST(Film, TheFirstReleasesKeyNamesReadTheSame) {
  const Reference& r = kReferences[0];
  const StateDict dict = framelift::weights::load_weights(reference(r, ".pth"));
  StateDict legacy;
  int renamed = 0;
  // The fusion blocks' 2x2 convolutions and each predictor's last 1x1 (its 2 flow channels).
  const std::regex fusion(R"(^(fuse\.convs\.\d+\.0)\.0\.(weight|bias)$)"), flow(R"(^(predict_flow\..*\._convs\.\d+)\.0\.(weight|bias)$)");
  for (const auto& [key, t] : dict) {
    std::smatch m;
    const bool bare = std::regex_match(key, m, fusion) || (std::regex_match(key, m, flow) && t.size(0) == 2);
    legacy[bare ? m.str(1) + "." + m.str(2) : key] = t;
    renamed += bare;
  }
  EXPECT_EQ(renamed, 16);  // 4 flow predictors' and 4 fusion blocks' weights and biases
  const auto shape = fm::detect_film(legacy, "legacy");
  ASSERT_TRUE(shape);
  EXPECT_TRUE(shape->legacy_keys);
  const StateDict io = framelift::weights::load_weights(reference(r, ".ref.safetensors"));
  const at::Tensor now = open(r, dict)->interpolate(io.at("img0"), io.at("img1"), 0.5);
  const at::Tensor then = open(r, legacy)->interpolate(io.at("img0"), io.at("img1"), 0.5);
  EXPECT_TRUE(now.equal(then));
}

// The port's releases are TorchScript files (torch.jit.script, then save): a module tree whose
// parameters carry the state dict's names. One saved here from the fp16 reference's weights (a
// tree of the same names, written by libtorch's own Module::save) reads as that state dict, dtype
// and all, and interpolates as the .pth does.
TEST(Film, ATorchScriptFileReadsAsItsStateDict) {
  const Reference& r = kReferences[1];
  const StateDict dict = framelift::weights::load_weights(reference(r, ".pth"));
  const fs::path pt = ft::temp_dir("film-torchscript") / "film_net_fp16.pt";
  ft::save_module_tree(pt, dict, {{"pyramid_levels", 5}, {"fusion_pyramid_levels", 4}});
  const StateDict read = framelift::weights::load_weights(pt);
  ASSERT_EQ(read.size(), dict.size());
  for (const auto& [key, t] : dict) {
    ASSERT_TRUE(read.count(key)) << key;
    EXPECT_EQ(read.at(key).scalar_type(), at::kHalf) << key;
    EXPECT_TRUE(read.at(key).equal(t)) << key;
  }
  const StateDict io = framelift::weights::load_weights(reference(r, ".ref.safetensors"));
  const at::Tensor from_pt = fm::open_interpolator(pt.string())->interpolate(io.at("img0"), io.at("img1"), 0.5);
  const at::Tensor from_pth = fm::open_interpolator(reference(r, ".pth").string())->interpolate(io.at("img0"), io.at("img1"), 0.5);
  EXPECT_TRUE(from_pt.equal(from_pth));
}

TEST(Film, DetectionReadsTheShapesAndOtherLoadersRefuseIt) {
  const StateDict dict = framelift::weights::load_weights(reference(kReferences[1], ".pth"));
  const auto shape = fm::detect_film(dict, "film-p5");
  ASSERT_TRUE(shape);
  EXPECT_EQ(shape->filters, 8);
  EXPECT_EQ(shape->sub_levels, 3);
  EXPECT_EQ(shape->fusion_levels, 4);
  EXPECT_EQ(shape->pyramid_levels, 7);  // not in the file: the published depth
  EXPECT_EQ(shape->flow_convs, (std::vector<int64_t>{2, 3, 3}));
  EXPECT_EQ(shape->flow_filters, (std::vector<int64_t>{8, 16, 32}));
  EXPECT_FALSE(shape->published());
  EXPECT_THROW(fm::build_rife_native(dict, "film-p5"), framelift::Error);
  EXPECT_FALSE(fm::detect_ifrnet(dict, "film-p5"));
  const fs::path ifrnet = ft::arch_reference_dir() / "ifrnet-s.pth";
  EXPECT_FALSE(fm::detect_film(framelift::weights::load_weights(ifrnet), ifrnet.string()));
  // open_interpolator takes the file by its keys (at the published depth, which 80x48 frames pad to).
  auto net = fm::open_interpolator(reference(kReferences[1], ".pth").string());
  EXPECT_EQ(net->info().arch, "film");
  EXPECT_EQ(net->info().size_multiple, 64);
  const StateDict io = framelift::weights::load_weights(reference(kReferences[1], ".ref.safetensors"));
  const at::Tensor y = net->interpolate(io.at("img0"), io.at("img1"), 0.5);
  EXPECT_EQ(y.sizes(), io.at("img0").sizes());
  EXPECT_TRUE(y.isfinite().all().item<bool>());
  try {
    net->interpolate(io.at("img0"), io.at("img1"), 0.5, 0.5);
    ADD_FAILURE() << "a flow scale was taken";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage);
  }
}

TEST(Film, AChangedShapeIsRefusedNamingTheTensor) {
  const fs::path file = reference(kReferences[0], ".pth");
  StateDict dict = framelift::weights::load_weights(file);
  dict["fuse.convs.1.1.0.weight"] = at::zeros({3, 3, 3, 3});
  try {
    fm::build_film(dict, "test.pth");
    ADD_FAILURE() << "a wrong shape was built";
  } catch (const framelift::Error& e) {
    EXPECT_NE(std::string(e.what()).find("fuse.convs.1.1.0.weight"), std::string::npos) << e.what();
  }
  dict = framelift::weights::load_weights(file);
  dict["fuse.extra.weight"] = at::zeros({1});
  EXPECT_THROW(fm::build_film(dict, "test.pth"), framelift::Error);  // a tensor the network would not use
  // A width no network has (an untrusted file): refused by detection, before any convolution.
  dict = framelift::weights::load_weights(file);
  dict["extract.extract_sublevels.convs.0.0.0.weight"] = at::zeros({1, 1, 1, 1}).expand({int64_t(1) << 40, 3, 3, 3});
  try {
    fm::detect_film(dict, "test.pth");
    ADD_FAILURE() << "a 2^40 width was taken";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Model);
    EXPECT_NE(std::string(e.what()).find("FILM layout"), std::string::npos) << e.what();
  }
}

// The planner prices FILM by its own widths: the walk counts every weight of the checkpoint, and
// the published layout costs more than the filters-8 one.
TEST(Film, ThePlannersWalkCountsTheWeights) {
  for (const Reference& r : kReferences) {
    SCOPED_TRACE(r.file);
    const StateDict dict = framelift::weights::load_weights(reference(r, ".pth"));
    fm::FilmShape shape = *fm::detect_film(dict, r.file);
    shape.pyramid_levels = r.pyramid_levels;
    double weights = 0;  // and biases: every tensor once, however often the network reuses it
    for (const auto& [key, t] : dict) weights += double(t.numel());
    const auto cost = framelift::arch::cost("film", 1, fm::film_arch_params(shape));
    EXPECT_NEAR(cost.params, weights, weights * 1e-9);
    EXPECT_EQ(cost.size_multiple, 1 << (r.pyramid_levels - 1));
    EXPECT_FALSE(cost.tiled);
  }
  const auto small = framelift::arch::cost("film", 1, fm::film_arch_params(*fm::detect_film(
                                                          framelift::weights::load_weights(reference(kReferences[0], ".pth")), "f8")));
  const double published = framelift::arch::cost("film", 1, {}).macs_per_px;
  std::cout << "film_net (published widths): " << published << " MACs/px, " << framelift::arch::cost("film", 1, {}).params
            << " weights; film-f8: " << small.macs_per_px << " MACs/px\n";
  EXPECT_GT(published, 10 * small.macs_per_px);
}

}  // namespace
