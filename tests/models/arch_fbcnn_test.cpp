// FBCNN against the upstream implementation (spandrel's FBCNN run on Debian's python3-torch by
// tests/data/arch/make_references.py, seeded weights in the upstream layout, the quality MLPs
// narrowed from 512 to 32 to keep the file small): the committed small checkpoint is detected
// from its keys and shapes and, on a real-frame crop of odd size (replicate-padded to 8 inside the
// network, as upstream pads), gives the upstream image within 80 dB in fp32 and the upstream's
// predicted quality factor within 1e-4. Every published configuration is detected from a state
// dict of its shapes; bf16 stays within 40 dB of fp32; tiles on the frame's grid of 8 stay within
// 50 dB of whole frames at a given quality (each would otherwise predict its own); wrong and
// missing tensors are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "models/jpeg_quality.h"
#include "util/error.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fm = framelift::models;
namespace ft = framelift::test;
using framelift::weights::StateDict;
using framelift::test::expect_refused;

namespace {

struct Config {
  int64_t in = 3;
  std::array<int64_t, 4> nc{64, 128, 256, 512};
  int64_t nb = 4, hidden = 512;
};

// Zeros in FBCNN's upstream layout.
StateDict fbcnn_shapes(const Config& c) {
  StateDict d;
  auto conv = [&](const std::string& p, int64_t i, int64_t o, int64_t k) {
    d[p + ".weight"] = at::zeros({o, i, k, k});
    d[p + ".bias"] = at::zeros({o});
  };
  auto linear = [&](const std::string& p, int64_t i, int64_t o) {
    d[p + ".weight"] = at::zeros({o, i});
    d[p + ".bias"] = at::zeros({o});
  };
  auto blocks = [&](const std::string& p, int64_t first, int64_t ch) {
    for (int64_t i = first; i < first + c.nb; ++i) {
      conv(p + "." + std::to_string(i) + ".res.0", ch, ch, 3);
      conv(p + "." + std::to_string(i) + ".res.2", ch, ch, 3);
    }
  };
  conv("m_head", c.in, c.nc[0], 3);
  for (int l = 0; l < 3; ++l) {
    const std::string down = "m_down" + std::to_string(l + 1), up = "m_up" + std::to_string(l + 1);
    blocks(down, 0, c.nc[l]);
    conv(down + "." + std::to_string(c.nb), c.nc[l], c.nc[l + 1], 2);
    d[up + ".0.weight"] = at::zeros({c.nc[l + 1], c.nc[l], 2, 2});  // transposed: [in, out, k, k]
    d[up + ".0.bias"] = at::zeros({c.nc[l]});
    blocks(up, 1, c.nc[l]);
    linear("to_gamma_" + std::to_string(l + 1) + ".0", c.hidden, c.nc[l]);
    linear("to_beta_" + std::to_string(l + 1) + ".0", c.hidden, c.nc[l]);
  }
  blocks("m_body_encoder", 0, c.nc[3]);
  blocks("m_body_decoder", 0, c.nc[3]);
  blocks("qf_pred", 0, c.nc[3]);
  linear("qf_pred." + std::to_string(c.nb + 2), c.nc[3], c.hidden);
  linear("qf_pred." + std::to_string(c.nb + 4), c.hidden, c.hidden);
  linear("qf_pred." + std::to_string(c.nb + 6), c.hidden, 1);
  linear("qf_embed.0", 1, c.hidden);
  linear("qf_embed.2", c.hidden, c.hidden);
  linear("qf_embed.4", c.hidden, c.hidden);
  conv("m_tail", c.nc[0], c.in, 3);
  return d;
}

void expect_detected_as(const fm::DetectedArch& d, const Config& c) {
  EXPECT_EQ(d.arch, "fbcnn");
  EXPECT_EQ(d.scale, 1);
  EXPECT_EQ(d.in_channels, c.in);
  EXPECT_EQ(d.out_channels, c.in);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(d.params.get("nc" + std::to_string(i), 0), double(c.nc[i])) << i;
  EXPECT_EQ(d.params.get("nb", 0), double(c.nb));
  EXPECT_EQ(d.params.get("qf_hidden", 0), double(c.hidden));
}

const char* kReference = "fbcnn-nc8";
const Config kReferenceConfig{.nc = {8, 16, 24, 32}, .nb = 2, .hidden = 32};  // make_references.py's fbcnn_configs

TEST(ArchFbcnn, MatchesTheUpstreamImageAndQualityFactor) {
  framelift::infer::configure_cpu_threads(0);
  const fs::path pth = ft::arch_reference_dir() / (std::string(kReference) + ".pth");
  const StateDict io = framelift::weights::load_weights(ft::arch_reference_dir() / (std::string(kReference) + ".ref.safetensors"));
  const auto d = fm::detect(framelift::weights::load_weights(pth), pth.string());
  ASSERT_TRUE(d);
  expect_detected_as(*d, kReferenceConfig);
  auto model = fm::load_model(pth);
  EXPECT_EQ(model->info().size_multiple, 1);  // it replicate-pads itself, as upstream,
  EXPECT_EQ(model->info().tile_grid, 8);      // and tiles stay on its grid of three halvings
  auto* estimator = dynamic_cast<fm::JpegQualityEstimator*>(model.get());
  ASSERT_NE(estimator, nullptr);
  EXPECT_FALSE(estimator->predicted_quality());
  const at::Tensor y = framelift::infer::upscale_tiled(*model, io.at("input"), {.tile = 0});
  ASSERT_EQ(y.sizes(), io.at("output").sizes());
  const double db = ft::psnr_in_range(y, io.at("output"));
  ASSERT_TRUE(estimator->predicted_quality());
  const double qf = *estimator->predicted_quality(), upstream = 100.0 * io.at("qf").item<double>();
  std::cout << kReference << ": fp32 vs upstream " << db << " dB; predicted quality " << qf << ", upstream's " << upstream << "\n";
  EXPECT_GE(db, 80.0);
  EXPECT_TRUE(std::isfinite(qf));
  EXPECT_GT(qf, 0.0);
  EXPECT_LT(qf, 100.0);
  EXPECT_NEAR(qf / 100.0, upstream / 100.0, 1e-4);

  // A given quality (upstream's qf_input, the stage's quality=) replaces the prediction.
  estimator->set_quality(30);
  const double given_db = ft::psnr_in_range(framelift::infer::upscale_tiled(*model, io.at("input"), {.tile = 0}),
                                            io.at("output_quality30"));
  const double apart = ft::psnr_in_range(io.at("output_quality30"), io.at("output"));
  std::cout << kReference << ": at a given quality 30 " << given_db << " dB vs upstream (" << apart << " dB from the predicted's)\n";
  EXPECT_GE(given_db, 80.0);
  EXPECT_LT(apart, 60.0) << "the given quality must change the output for the comparison to show it arrives";
}

TEST(ArchFbcnn, EveryPublishedConfigurationIsDetected) {
  // jiaxi-jiang/FBCNN: fbcnn_color and fbcnn_gray (and the gray double-JPEG model), nc [64, 128,
  // 256, 512], nb 4, 512-wide quality MLPs.
  for (int64_t in : {1, 3}) {
    SCOPED_TRACE(in);
    const Config c{.in = in};
    const auto d = fm::detect(fbcnn_shapes(c), "test.pth");
    ASSERT_TRUE(d);
    expect_detected_as(*d, c);
  }
}

TEST(ArchFbcnn, TiledMatchesWholeAtAGivenQualityAndBf16MatchesFp32OnARealFrame) {
  framelift::infer::configure_cpu_threads(0);
  auto model = fm::load_model(ft::arch_reference_dir() / (std::string(kReference) + ".pth"));
  auto& estimator = dynamic_cast<fm::JpegQualityEstimator&>(*model);
  EXPECT_EQ(model->info().tile_overlap, 32);
  const at::Tensor frame = ft::real_frame(101, 75).squeeze(0);
  auto tiled_db = [&](int overlap) {
    const at::Tensor whole = framelift::infer::upscale_tiled(*model, frame, {.tile = 0});
    return ft::psnr_in_range(framelift::infer::upscale_tiled(*model, frame, {.tile = 40, .overlap = overlap}), whole);
  };
  // Each tile predicts its own quality from its own mean, so tiles are conditioned on slightly
  // different qualities (reported, not held to the seam bound: it depends on the weights).
  const double predicted_db = tiled_db(-1);
  // Given one quality, every tile is conditioned alike and only the convolutions' context is left.
  estimator.set_quality(50);
  const double given_db = tiled_db(-1), seams_db = tiled_db(0);
  const at::Tensor whole = framelift::infer::upscale_tiled(*model, frame, {.tile = 0});
  model->to(c10::kCPU, at::kBFloat16);
  const at::Tensor bf16 = framelift::infer::upscale_tiled(*model, frame.to(at::kBFloat16), {.tile = 0}).to(at::kFloat);
  const double bf16_db = ft::psnr_in_range(bf16, whole);
  std::cout << kReference << ": tiled (40 px, 32 px context) vs whole " << predicted_db << " dB with per-tile predictions, "
            << given_db << " dB at a given quality, " << seams_db << " dB without context; bf16 vs fp32 " << bf16_db << " dB\n";
  EXPECT_LT(seams_db, 50.0) << "tiles without context should show seams: the check below would catch a wrong overlap";
  EXPECT_GE(given_db, 50.0);
  EXPECT_GE(bf16_db, 40.0);
}

TEST(ArchFbcnn, WrongAndMissingTensorsAreRefusedByName) {
  StateDict d = fbcnn_shapes(kReferenceConfig);
  d["to_beta_2.0.weight"] = at::zeros({16, 31});
  expect_refused(d, "test.pth: tensor to_beta_2.0.weight has shape [16, 31], expected [16, 32]");
  d = fbcnn_shapes(kReferenceConfig);
  d.erase("qf_pred.6.bias");
  expect_refused(d, "qf_pred.6.bias");
  d = fbcnn_shapes(kReferenceConfig);
  d.erase("m_up2.2.res.2.weight");
  expect_refused(d, "m_up2.2.res.2.weight");
  d = fbcnn_shapes(kReferenceConfig);
  d.erase("m_down1.2.weight");
  d.erase("m_down1.2.bias");
  expect_refused(d, "pooling");
}

}  // namespace
