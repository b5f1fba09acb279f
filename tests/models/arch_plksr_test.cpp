// PLKSR and RealPLKSR against the upstream implementations (spandrel's PLKSR.py and RealPLKSR.py
// run on Debian's python3-torch by tests/data/arch/make_references.py, with seeded weights in the
// upstream layout): the committed small checkpoints (the three channel mixers, the rectangular
// sparse kernel, no attention; GroupNorm and LayerNorm, pixel shuffle and DySample, x1 to x4) are
// detected from their keys and shapes, and on the stored real-frame crop (odd sizes) give the
// upstream output within 80 dB in fp32. Every published configuration is detected from a state
// dict of its shapes; tiled output stays within 50 dB of whole-frame output where the network is
// tileable, and a RealPLKSR with GroupNorm is run whole even when tiles are asked for; bf16 stays
// within 40 dB of fp32; wrong and missing tensors are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "support/test_paths.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;
using framelift::test::expect_refused;

namespace {

fs::path reference_dir() { return ft::source_dir() / "tests" / "data" / "arch"; }

// PSNR of `a` against the reference `b`, the peak being b's own range (these random-weight
// networks do not stay in [0, 1]).
double psnr_in_range(const at::Tensor& a, const at::Tensor& b) {
  const double range = (b.max() - b.min()).item<double>();
  const double mse = (a.to(at::kDouble) - b.to(at::kDouble)).pow(2).mean().item<double>();
  return mse == 0 ? 200 : 10 * std::log10(range * range / mse);
}

void conv(StateDict& d, const std::string& p, int64_t in, int64_t out, int64_t kh, int64_t kw, bool bias = true) {
  d[p + ".weight"] = at::zeros({out, in, kh, kw});
  if (bias) d[p + ".bias"] = at::zeros({out});
}

struct Shape {
  int64_t dim = 64, blocks = 28, kernel = 17, scale = 4;
  bool ea = true;
};

// Zeros in PLKSR's upstream layout (CCM mixer, plain large kernel): detection reads shapes only.
StateDict plksr_shapes(const Shape& s) {
  StateDict d;
  conv(d, "feats.0", 3, s.dim, 3, 3);
  for (int64_t b = 1; b <= s.blocks; ++b) {
    const std::string p = "feats." + std::to_string(b);
    conv(d, p + ".channe_mixer.0", s.dim, 2 * s.dim, 3, 3);
    conv(d, p + ".channe_mixer.2", 2 * s.dim, s.dim, 1, 1);
    conv(d, p + ".lk.conv", s.dim / 4, s.dim / 4, s.kernel, s.kernel);
    if (s.ea) conv(d, p + ".attn.f.0", s.dim, s.dim, 3, 3);
    conv(d, p + ".refine", s.dim, s.dim, 1, 1);
  }
  conv(d, "feats." + std::to_string(s.blocks + 1), s.dim, 3 * s.scale * s.scale, 3, 3);
  return d;
}

// Zeros in RealPLKSR's: a Dropout at feats.{n+1} holds no weights; DySample sits at to_img.
StateDict realplksr_shapes(const Shape& s, bool layer_norm, bool dysample) {
  StateDict d;
  conv(d, "feats.0", 3, s.dim, 3, 3);
  for (int64_t b = 1; b <= s.blocks; ++b) {
    const std::string p = "feats." + std::to_string(b);
    if (layer_norm) {
      d[p + ".layer_norm.weight"] = at::zeros({s.dim});
      d[p + ".layer_norm.bias"] = at::zeros({s.dim});
    } else {
      d[p + ".norm.weight"] = at::zeros({s.dim});
      d[p + ".norm.bias"] = at::zeros({s.dim});
    }
    conv(d, p + ".channel_mixer.0", s.dim, 2 * s.dim, 3, 3);
    conv(d, p + ".channel_mixer.2", 2 * s.dim, s.dim, 3, 3);
    conv(d, p + ".lk.conv", s.dim / 4, s.dim / 4, s.kernel, s.kernel);
    if (s.ea) conv(d, p + ".attn.f.0", s.dim, s.dim, 3, 3);
    conv(d, p + ".refine", s.dim, s.dim, 1, 1);
  }
  const int64_t s2 = s.scale * s.scale, positions = 2 * (s.scale % 2 ? 3 : 4) * s2;
  conv(d, "feats." + std::to_string(s.blocks + 2), s.dim, 3 * s2, 3, 3);
  if (dysample) {
    conv(d, "to_img.offset", 3 * s2, positions, 1, 1);
    conv(d, "to_img.scope", 3 * s2, positions, 1, 1, false);
    d["to_img.init_pos"] = at::zeros({1, positions, 1, 1});
    if (s.scale != 1) conv(d, "to_img.end_conv", 3 * s2, 3, 1, 1);
  }
  return d;
}

// Each committed reference with the hyper-parameters its detection must find.
struct Ref {
  const char* name;
  const char* arch;
  int scale;
  framelift::arch::ArchParams params;
};

const std::vector<Ref>& references() {
  static const std::vector<Ref> refs = {
      {"plksr-d16-x2", "plksr", 2,
       {{"dim", 16}, {"n_blocks", 3}, {"kernel_size", 17}, {"lk_channels", 4}, {"mixer_kernel_in", 3},
        {"mixer_kernel_out", 1}, {"rect_sparse", 0}, {"ea", 1}}},
      {"plksr-d16-x4-iccm-noea", "plksr", 4,
       {{"dim", 16}, {"n_blocks", 2}, {"kernel_size", 13}, {"lk_channels", 4}, {"mixer_kernel_in", 1},
        {"mixer_kernel_out", 3}, {"rect_sparse", 0}, {"ea", 0}}},
      {"plksr-d16-x3-dccm-rect", "plksr", 3,
       {{"dim", 16}, {"n_blocks", 2}, {"kernel_size", 15}, {"lk_channels", 4}, {"mixer_kernel_in", 3},
        {"mixer_kernel_out", 3}, {"rect_sparse", 1}, {"ea", 1}}},
      {"realplksr-d16-x2", "realplksr", 2,
       {{"dim", 16}, {"n_blocks", 3}, {"kernel_size", 17}, {"lk_channels", 4}, {"ea", 1}, {"layer_norm", 0}, {"dysample", 0}}},
      {"realplksr-d16-x4-ln", "realplksr", 4,
       {{"dim", 16}, {"n_blocks", 2}, {"kernel_size", 17}, {"lk_channels", 4}, {"ea", 1}, {"layer_norm", 1}, {"dysample", 0}}},
      {"realplksr-d16-x2-ln-dysample", "realplksr", 2,
       {{"dim", 16}, {"n_blocks", 2}, {"kernel_size", 17}, {"lk_channels", 4}, {"ea", 1}, {"layer_norm", 1}, {"dysample", 1}}},
      {"realplksr-d16-x3-dysample", "realplksr", 3,
       {{"dim", 16}, {"n_blocks", 2}, {"kernel_size", 17}, {"lk_channels", 4}, {"ea", 1}, {"layer_norm", 0}, {"dysample", 1}}},
      {"realplksr-d16-x1-ln", "realplksr", 1,
       {{"dim", 16}, {"n_blocks", 2}, {"kernel_size", 17}, {"lk_channels", 4}, {"ea", 1}, {"layer_norm", 1}, {"dysample", 0}}},
  };
  return refs;
}

std::unique_ptr<fm::ImageModel> load(const std::string& name) { return fm::load_model(reference_dir() / (name + ".pth")); }

TEST(ArchPlksr, MatchesTheUpstreamImplementationOnTheCommittedReferences) {
  framelift::infer::configure_cpu_threads(0);
  for (const Ref& ref : references()) {
    SCOPED_TRACE(ref.name);
    const fs::path pth = reference_dir() / (std::string(ref.name) + ".pth");
    const StateDict io = framelift::weights::load_weights(reference_dir() / (std::string(ref.name) + ".ref.safetensors"));
    const auto d = fm::detect(framelift::weights::load_weights(pth), pth.string());
    ASSERT_TRUE(d);
    EXPECT_EQ(d->arch, ref.arch);
    EXPECT_EQ(d->scale, ref.scale);
    EXPECT_EQ(d->params, ref.params);
    auto model = fm::load_model(pth);
    const at::Tensor y = model->forward(io.at("input"));
    ASSERT_EQ(y.sizes(), io.at("output").sizes());
    const double db = psnr_in_range(y, io.at("output"));
    std::cout << ref.name << ": fp32 vs upstream " << db << " dB\n";
    EXPECT_GE(db, 80.0);
  }
}

TEST(ArchPlksr, EveryPublishedConfigurationIsDetected) {
  // PLKSR (dim 64, 28 blocks, kernel 17) and PLKSR-tiny (12 blocks, kernel 13), x2 to x4.
  for (const Shape s : {Shape{64, 28, 17, 4}, Shape{64, 28, 17, 3}, Shape{64, 28, 17, 2}, Shape{64, 12, 13, 4},
                        Shape{64, 12, 13, 2}}) {
    SCOPED_TRACE(testing::Message() << "PLKSR " << s.blocks << " blocks, kernel " << s.kernel << ", x" << s.scale);
    const auto d = fm::detect(plksr_shapes(s), "test.pth");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->arch, "plksr");
    EXPECT_EQ(d->scale, s.scale);
    EXPECT_EQ(d->params.get("dim", 0), 64);
    EXPECT_EQ(d->params.get("n_blocks", 0), double(s.blocks));
    EXPECT_EQ(d->params.get("kernel_size", 0), double(s.kernel));
    EXPECT_EQ(d->params.get("lk_channels", 0), 16);
    EXPECT_EQ(d->params.get("mixer_kernel_in", 0), 3);
    EXPECT_EQ(d->params.get("mixer_kernel_out", 0), 1);
    EXPECT_EQ(d->params.get("ea", 0), 1);
  }
  // RealPLKSR (neosr: dim 64, 28 blocks, kernel 17), with and without layer_norm and DySample,
  // x1 to x4 (the community's 1x restoration models included), and a 12-block kernel-13 one.
  struct Real {
    Shape shape;
    bool layer_norm, dysample;
  };
  for (const Real r : {Real{{64, 28, 17, 4}, false, false}, Real{{64, 28, 17, 2}, false, false}, Real{{64, 28, 17, 1}, false, false},
                       Real{{64, 28, 17, 3}, false, false}, Real{{64, 28, 17, 4}, true, false}, Real{{64, 28, 17, 2}, true, false},
                       Real{{64, 28, 17, 1}, true, false}, Real{{64, 28, 17, 4}, true, true}, Real{{64, 28, 17, 2}, false, true},
                       Real{{64, 28, 17, 3}, true, true}, Real{{64, 12, 13, 4}, false, false}}) {
    SCOPED_TRACE(testing::Message() << "RealPLKSR " << r.shape.blocks << " blocks, x" << r.shape.scale
                                    << (r.layer_norm ? ", layer_norm" : "") << (r.dysample ? ", dysample" : ""));
    const auto d = fm::detect(realplksr_shapes(r.shape, r.layer_norm, r.dysample), "test.pth");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->arch, "realplksr");
    EXPECT_EQ(d->scale, r.shape.scale);
    EXPECT_EQ(d->params.get("dim", 0), 64);
    EXPECT_EQ(d->params.get("n_blocks", 0), double(r.shape.blocks));
    EXPECT_EQ(d->params.get("kernel_size", 0), double(r.shape.kernel));
    EXPECT_EQ(d->params.get("lk_channels", 0), 16);
    EXPECT_EQ(d->params.get("layer_norm", -1), r.layer_norm ? 1 : 0);
    EXPECT_EQ(d->params.get("dysample", -1), r.dysample ? 1 : 0);
    // The zeros build: every tensor the layout has is one the network reads.
    EXPECT_NO_THROW(fm::build_model(realplksr_shapes(r.shape, r.layer_norm, r.dysample), "test.pth"));
  }
  EXPECT_NO_THROW(fm::build_model(plksr_shapes({64, 12, 13, 4}), "test.pth"));
}

TEST(ArchPlksr, TiledMatchesWholeAndBf16MatchesFp32OnARealFrame) {
  framelift::infer::configure_cpu_threads(0);
  for (const char* name : {"plksr-d16-x2", "plksr-d16-x4-iccm-noea", "plksr-d16-x3-dccm-rect", "realplksr-d16-x4-ln",
                           "realplksr-d16-x2-ln-dysample", "realplksr-d16-x1-ln"}) {
    SCOPED_TRACE(name);
    auto model = load(name);
    EXPECT_TRUE(model->info().tiled);
    const at::Tensor frame = ft::real_frame(96, 70).squeeze(0);
    const at::Tensor whole = framelift::infer::upscale_tiled(*model, frame, {.tile = 0});
    const at::Tensor tiled = framelift::infer::upscale_tiled(*model, frame, {.tile = 37, .overlap = -1});
    const double tiled_db = psnr_in_range(tiled, whole);
    const double seams_db = psnr_in_range(framelift::infer::upscale_tiled(*model, frame, {.tile = 37, .overlap = 0}), whole);
    std::cout << name << ": without context " << seams_db << " dB\n";
    EXPECT_LT(seams_db, 50.0) << "tiles without context should show seams: the check below would catch a wrong overlap";
    model->to(c10::kCPU, at::kBFloat16);
    const at::Tensor bf16 = model->forward(frame.unsqueeze(0)).squeeze(0).to(at::kFloat);
    const double bf16_db = psnr_in_range(bf16, whole);
    std::cout << name << ": tiled (37 px, " << model->info().tile_overlap << " px context) vs whole " << tiled_db
              << " dB; bf16 vs fp32 " << bf16_db << " dB\n";
    EXPECT_GE(tiled_db, 50.0);
    EXPECT_GE(bf16_db, 40.0);
  }
}

// The model it wraps, claiming to be tileable: what the tiler would make of a GroupNorm network
// if ModelInfo did not say otherwise.
class ClaimsTiled : public fm::ImageModel {
 public:
  explicit ClaimsTiled(fm::ImageModel& inner) : inner_(inner), info_(inner.info()) { info_.tiled = true; }
  const fm::ModelInfo& info() const override { return info_; }
  at::Tensor forward(const at::Tensor& x) override { return inner_.forward(x); }
  void to(c10::Device device, c10::ScalarType dtype) override { inner_.to(device, dtype); }

 private:
  fm::ImageModel& inner_;
  fm::ModelInfo info_;
};

TEST(ArchPlksr, GroupNormModelsRunWholeFramesWhateverTileIsAsked) {
  framelift::infer::configure_cpu_threads(0);
  for (const char* name : {"realplksr-d16-x2", "realplksr-d16-x3-dysample"}) {
    SCOPED_TRACE(name);
    auto model = load(name);
    EXPECT_FALSE(model->info().tiled);
    const at::Tensor frame = ft::real_frame(96, 70).squeeze(0);
    const at::Tensor whole = framelift::infer::upscale_tiled(*model, frame, {.tile = 0});
    int used = -1;
    const at::Tensor asked = framelift::infer::upscale_tiled(*model, frame, {.tile = 37, .overlap = -1, .batch = 2}, &used);
    EXPECT_EQ(used, 0);
    EXPECT_TRUE(at::equal(asked, whole));
    // Tiled for real, with context past the receptive field, each tile has its own statistics
    // (on a larger frame, so that a tile's window is not most of it).
    ClaimsTiled pretend(*model);
    const at::Tensor large = ft::real_frame(240, 176).squeeze(0);
    const double db = psnr_in_range(framelift::infer::upscale_tiled(pretend, large, {.tile = 37, .overlap = 40}),
                                    framelift::infer::upscale_tiled(*model, large, {.tile = 0}));
    std::cout << name << ": tiled regardless (37 px, 40 px context) vs whole " << db << " dB\n";
    EXPECT_LT(db, 50.0) << "GroupNorm over a tile should differ from over the frame, or the whole-frame rule is moot";
    model->to(c10::kCPU, at::kBFloat16);
    const double bf16_db = psnr_in_range(model->forward(frame.unsqueeze(0)).squeeze(0).to(at::kFloat), whole);
    std::cout << name << ": bf16 vs fp32 " << bf16_db << " dB\n";
    EXPECT_GE(bf16_db, 40.0);
  }
}

TEST(ArchPlksr, WrongAndMissingTensorsAreRefusedByName) {
  StateDict d = plksr_shapes({16, 3, 17, 2});
  d["feats.2.lk.conv.weight"] = at::zeros({4, 4, 17, 15});
  expect_refused(d, "test.pth: tensor feats.2.lk.conv.weight has shape [4, 4, 17, 15], expected [4, 4, 17, 17]");
  d = plksr_shapes({16, 3, 17, 2});
  d.erase("feats.3.attn.f.0.bias");
  expect_refused(d, "test.pth: missing tensor feats.3.attn.f.0.bias");
  d = realplksr_shapes({16, 3, 17, 2}, false, true);
  d["feats.2.norm.weight"] = at::zeros({15});
  expect_refused(d, "test.pth: tensor feats.2.norm.weight has shape [15], expected [16]");
  d = realplksr_shapes({16, 3, 17, 2}, false, true);
  d.erase("to_img.scope.weight");
  expect_refused(d, "test.pth: missing tensor to_img.scope.weight");
  // A layer a network would silently run without.
  d = realplksr_shapes({16, 3, 17, 2}, true, false);
  d["feats.1.norm.weight"] = at::zeros({16});
  expect_refused(d, "unexpected tensor feats.1.norm.weight");
  // The dilated sparse kernel: what upstream cannot detect, framelift does not guess.
  d = plksr_shapes({16, 3, 17, 2});
  d["feats.1.lk.convs.0.weight"] = at::zeros({4, 4, 5, 5});
  expect_refused(d, "sparse (dilated) large kernel is not supported");
}

}  // namespace
