// SPAN against the upstream implementation (spandrel's SPAN code run on Debian's python3-torch by
// tests/data/arch/make_references.py, with seeded weights in the upstream layout): the committed
// small checkpoints are detected from their keys and shapes, and on the stored real-frame crop
// (odd sizes) give the upstream output within 80 dB in fp32. Every published configuration
// (48 and 52 features, x2 and x4, with and without the input normalisation) is detected from a
// state dict of its shapes; tiled output stays within 50 dB of whole-frame output and bf16 within
// 40 dB of fp32, on a real frame; wrong and missing tensors are refused by name.
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
using framelift::test::refusal_of;

namespace {

// Zeros in SPAN's upstream layout: what detection reads is shapes only.
StateDict span_shapes(int64_t feat, int64_t scale, bool norm, int64_t in = 3) {
  StateDict d;
  auto conv = [&](const std::string& p, int64_t i, int64_t o, int64_t k) {
    d[p + ".weight"] = at::zeros({o, i, k, k});
    d[p + ".bias"] = at::zeros({o});
  };
  auto conv3xc = [&](const std::string& p, int64_t i, int64_t o) {
    conv(p + ".sk", i, o, 1);
    conv(p + ".conv.0", i, 2 * i, 1);
    conv(p + ".conv.1", 2 * i, 2 * o, 3);
    conv(p + ".conv.2", 2 * o, o, 1);
    conv(p + ".eval_conv", i, o, 3);
  };
  conv3xc("conv_1", in, feat);
  for (int b = 1; b <= 6; ++b)
    for (const char* c : {"c1_r", "c2_r", "c3_r"}) conv3xc("block_" + std::to_string(b) + "." + c, feat, feat);
  conv3xc("conv_2", feat, feat);
  conv("conv_cat", 4 * feat, feat, 1);
  conv("upsampler.0", feat, in * scale * scale, 3);
  if (!norm) d["no_norm"] = at::zeros({1});
  return d;
}

TEST(ArchSpan, MatchesTheUpstreamImplementationOnTheCommittedReferences) {
  framelift::infer::configure_cpu_threads(0);
  struct Ref {
    const char* name;
    int scale;
    int feat;
    bool norm;
  };
  for (const Ref& ref : {Ref{"span-f16-x2", 2, 16, true}, Ref{"span-f8-x4-nonorm", 4, 8, false}}) {
    SCOPED_TRACE(ref.name);
    const fs::path pth = ft::arch_reference_dir() / (std::string(ref.name) + ".pth");
    const StateDict io = framelift::weights::load_weights(ft::arch_reference_dir() / (std::string(ref.name) + ".ref.safetensors"));
    const auto d = fm::detect(framelift::weights::load_weights(pth), pth.string());
    ASSERT_TRUE(d);
    EXPECT_EQ(d->arch, "span");
    EXPECT_EQ(d->scale, ref.scale);
    EXPECT_EQ(d->params.get("feature_channels", 0), ref.feat);
    EXPECT_EQ(d->params.get("norm", -1), ref.norm ? 1 : 0);
    auto model = fm::load_model(pth);
    const at::Tensor y = model->forward(io.at("input"));
    ASSERT_EQ(y.sizes(), io.at("output").sizes());
    const double db = ft::psnr_in_range(y, io.at("output"));
    std::cout << ref.name << ": fp32 vs upstream " << db << " dB\n";
    EXPECT_GE(db, 80.0);
  }
}

TEST(ArchSpan, EveryPublishedConfigurationIsDetected) {
  struct Config {
    int64_t feat, scale;
    bool norm;
  };
  // 48 features: the paper's SPAN and most community models (4xNomos8k_span_otf, 2xHFA2kSPAN);
  // 52: the NTIRE "SPAN-ch52" models; without normalisation: later community trainings.
  for (const Config c : {Config{48, 4, true}, Config{48, 2, true}, Config{52, 4, true}, Config{52, 2, true},
                         Config{48, 4, false}, Config{48, 1, true}}) {
    SCOPED_TRACE(testing::Message() << c.feat << " features, x" << c.scale << (c.norm ? "" : ", no norm"));
    const auto d = fm::detect(span_shapes(c.feat, c.scale, c.norm), "test.pth");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->arch, "span");
    EXPECT_EQ(d->scale, c.scale);
    EXPECT_EQ(d->in_channels, 3);
    EXPECT_EQ(d->out_channels, 3);
    EXPECT_EQ(d->params.get("feature_channels", 0), double(c.feat));
    EXPECT_EQ(d->params.get("norm", -1), c.norm ? 1.0 : 0.0);
  }
}

TEST(ArchSpan, TiledMatchesWholeAndBf16MatchesFp32OnARealFrame) {
  framelift::infer::configure_cpu_threads(0);
  for (const char* name : {"span-f16-x2", "span-f8-x4-nonorm"}) {
    SCOPED_TRACE(name);
    auto model = fm::load_model(ft::arch_reference_dir() / (std::string(name) + ".pth"));
    EXPECT_EQ(model->info().tile_overlap, 16);
    const at::Tensor frame = ft::real_frame(96, 70).squeeze(0);
    const at::Tensor whole = framelift::infer::upscale_tiled(*model, frame, {.tile = 0});
    const at::Tensor tiled = framelift::infer::upscale_tiled(*model, frame, {.tile = 37, .overlap = -1});
    const double tiled_db = ft::psnr_in_range(tiled, whole);
    const double seams_db = ft::psnr_in_range(framelift::infer::upscale_tiled(*model, frame, {.tile = 37, .overlap = 0}), whole);
    std::cout << name << ": without context " << seams_db << " dB\n";
    EXPECT_LT(seams_db, 50.0) << "tiles without context should show seams: the check above would catch a wrong overlap";
    model->to(c10::kCPU, at::kBFloat16);
    const at::Tensor bf16 = model->forward(frame.unsqueeze(0)).squeeze(0).to(at::kFloat);
    const double bf16_db = ft::psnr_in_range(bf16, whole);
    std::cout << name << ": tiled (37 px, 16 px context) vs whole " << tiled_db << " dB; bf16 vs fp32 " << bf16_db << " dB\n";
    EXPECT_GE(tiled_db, 50.0);
    EXPECT_GE(bf16_db, 40.0);
  }
}

TEST(ArchSpan, WrongAndMissingTensorsAreRefusedByName) {
  StateDict d = span_shapes(16, 2, true);
  d["block_3.c2_r.conv.1.weight"] = at::zeros({32, 31, 3, 3});
  EXPECT_EQ(refusal_of(d), "test.pth: tensor block_3.c2_r.conv.1.weight has shape [32, 31, 3, 3], expected [32, 32, 3, 3]");
  d = span_shapes(16, 2, true);
  d.erase("block_5.c3_r.sk.bias");
  expect_refused(d, "block_5.c3_r.sk.bias");
}

}  // namespace
