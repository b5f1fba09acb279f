// SAFMN against the upstream implementation (spandrel's SAFMN code on Debian's python3-torch, run
// by tests/data/arch/make_references.py with seeded weights in the upstream layout): the committed
// small checkpoints (x2, and x4 with an FFN ratio of 1.5) are detected from their keys and shapes
// and give the upstream output within 80 dB in fp32 on real crops (multiples of 8, as spandrel
// requires). Every published configuration is detected; tiles stay within 50 dB of whole frames
// (odd-sized frames, padded to 8) and bf16 within 40 dB of fp32; bad tensors are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <iostream>

#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;
using framelift::test::expect_refused;
using framelift::test::refusal_of;

namespace {

StateDict safmn_shapes(int64_t dim, int64_t blocks, int64_t hidden, int64_t scale) {
  StateDict d;
  auto conv = [&](const std::string& p, int64_t i, int64_t o, int64_t k) {
    d[p + ".weight"] = at::zeros({o, i, k, k});
    d[p + ".bias"] = at::zeros({o});
  };
  conv("to_feat", 3, dim, 3);
  for (int64_t b = 0; b < blocks; ++b) {
    const std::string p = "feats." + std::to_string(b);
    for (const char* n : {".norm1", ".norm2"}) {
      d[p + n + ".weight"] = at::zeros({dim});
      d[p + n + ".bias"] = at::zeros({dim});
    }
    for (int l = 0; l < 4; ++l) conv(p + ".safm.mfr." + std::to_string(l), 1, dim / 4, 3);
    conv(p + ".safm.aggr", dim, dim, 1);
    conv(p + ".ccm.ccm.0", dim, hidden, 3);
    conv(p + ".ccm.ccm.2", hidden, dim, 1);
  }
  conv("to_img.0", dim, 3 * scale * scale, 3);
  return d;
}

TEST(ArchSafmn, MatchesTheUpstreamImplementationOnTheCommittedReferences) {
  framelift::infer::configure_cpu_threads(0);
  struct Ref {
    const char* name;
    int scale, dim, blocks, hidden;
  };
  for (const Ref ref : {Ref{"safmn-d16-x2", 2, 16, 2, 32}, Ref{"safmn-d12-x4-ffn1.5", 4, 12, 3, 18}}) {
    SCOPED_TRACE(ref.name);
    const fs::path pth = ft::arch_reference_dir() / (std::string(ref.name) + ".pth");
    const StateDict io = framelift::weights::load_weights(ft::arch_reference_dir() / (std::string(ref.name) + ".ref.safetensors"));
    const auto d = fm::detect(framelift::weights::load_weights(pth), pth.string());
    ASSERT_TRUE(d);
    EXPECT_EQ(d->arch, "safmn");
    EXPECT_EQ(d->scale, ref.scale);
    EXPECT_EQ(d->params.get("dim", 0), ref.dim);
    EXPECT_EQ(d->params.get("n_blocks", 0), ref.blocks);
    EXPECT_EQ(d->params.get("ffn_hidden", 0), ref.hidden);
    auto model = fm::load_model(pth);
    EXPECT_EQ(model->info().size_multiple, 8);
    const at::Tensor y = model->forward(io.at("input"));
    ASSERT_EQ(y.sizes(), io.at("output").sizes());
    const double db = ft::psnr_in_range(y, io.at("output"));
    std::cout << ref.name << ": fp32 vs upstream " << db << " dB\n";
    EXPECT_GE(db, 80.0);
  }
}

TEST(ArchSafmn, EveryPublishedConfigurationIsDetected) {
  // sunny2109/SAFMN: SAFMN (dim 36, 8 blocks) and SAFMN-L (128, 16), FFN ratio 2, x2/x3/x4.
  for (auto [dim, blocks] : {std::pair<int64_t, int64_t>{36, 8}, {128, 16}})
    for (int64_t s : {2, 3, 4}) {
      SCOPED_TRACE(testing::Message() << "dim " << dim << " x" << s);
      const auto d = fm::detect(safmn_shapes(dim, blocks, 2 * dim, s), "test.pth");
      ASSERT_TRUE(d);
      EXPECT_EQ(d->arch, "safmn");
      EXPECT_EQ(d->scale, s);
      EXPECT_EQ(d->params.get("dim", 0), double(dim));
      EXPECT_EQ(d->params.get("n_blocks", 0), double(blocks));
      EXPECT_EQ(d->params.get("ffn_hidden", 0), double(2 * dim));
    }
}

TEST(ArchSafmn, TiledMatchesWholeAndBf16MatchesFp32OnARealFrame) {
  framelift::infer::configure_cpu_threads(0);
  auto model = fm::load_model(ft::arch_reference_dir() / "safmn-d16-x2.pth");
  EXPECT_EQ(model->info().tile_overlap, 48);
  // Large enough that a 40 px tile's window (136 px with its context) is not the whole frame.
  const at::Tensor frame = ft::real_frame(201, 155).squeeze(0);
  const at::Tensor whole = framelift::infer::upscale_tiled(*model, frame, {.tile = 0});
  const double tiled_db = ft::psnr_in_range(framelift::infer::upscale_tiled(*model, frame, {.tile = 40, .overlap = -1}), whole);
  const double seams_db = ft::psnr_in_range(framelift::infer::upscale_tiled(*model, frame, {.tile = 40, .overlap = 0}), whole);
  model->to(c10::kCPU, at::kBFloat16);
  const double bf16_db =
      ft::psnr_in_range(framelift::infer::upscale_tiled(*model, frame.to(at::kBFloat16), {.tile = 0}).to(at::kFloat), whole);
  std::cout << "safmn-d16-x2: tiled (40 px, 48 px context) vs whole " << tiled_db << " dB, without context " << seams_db
            << " dB; bf16 vs fp32 " << bf16_db << " dB\n";
  EXPECT_GE(tiled_db, 50.0);
  EXPECT_LT(seams_db, 50.0);
  EXPECT_GE(bf16_db, 40.0);
}

TEST(ArchSafmn, WrongAndMissingTensorsAreRefusedByName) {
  StateDict d = safmn_shapes(16, 2, 32, 2);
  d["feats.1.safm.mfr.2.weight"] = at::zeros({4, 2, 3, 3});
  EXPECT_EQ(refusal_of(d), "test.pth: tensor feats.1.safm.mfr.2.weight has shape [4, 2, 3, 3], expected [4, 1, 3, 3]");
  d = safmn_shapes(16, 2, 32, 2);
  d.erase("feats.0.norm2.bias");
  expect_refused(d, "feats.0.norm2.bias");
}

}  // namespace
