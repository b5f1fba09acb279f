// The per-layer layout paths (infer/conv_layout.h) against plain NCHW fp32, checkasm-style, for
// every committed upstream reference (tests/data/arch: each image architecture, small seeded
// checkpoints in upstream layouts) and PLKSR at its published size: in fp32 the auto choice and
// large kernels forced to NCHW (what the AVX2 EPYC's measurements pick, reached here on any CPU)
// give the NCHW output within 80 dB (the agreement the references are held to against upstream)
// on the reference's own odd-sized crop, and the large-kernel path does tiled at 37 px too (tile
// seams, the model's declared context); where the architecture runs in bf16, bf16 with the
// per-layer layouts is within 40 dB of NCHW fp32 (the precision gate). A failure prints the checkpoint, size, policy and tiling.
// `models info` reports the path of PLKSR's large kernel.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>

#include "arch/declaration.h"
#include "infer/conv_layout.h"
#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/arch_support.h"
#include "models/architecture_registry.h"
#include "models/layer_report.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;
namespace fi = framelift::infer;
namespace fm = framelift::models;
namespace ft = framelift::test;
using fi::ConvLayoutPolicy;

namespace {

class PolicyScope {
 public:
  explicit PolicyScope(ConvLayoutPolicy p) { fi::set_conv_layout_policy(p); }
  ~PolicyScope() { fi::set_conv_layout_policy(std::nullopt); }
};

// RIFE's, IFRNet's and FILM's checkpoints are interpolators' (open_interpolator), not image networks.
bool interpolator(const std::string& stem) {
  return stem.rfind("rife-", 0) == 0 || stem.rfind("ifrnet-", 0) == 0 || stem.rfind("film-", 0) == 0 || stem.rfind("gmfss-", 0) == 0;
}

// Not an image network at all: RetinaFace gives boxes and landmarks (models/face_detector.h).
bool detector(const std::string& stem) { return stem.rfind("retinaface-", 0) == 0; }

std::vector<fs::path> image_references() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(ft::arch_reference_dir()))
    if (e.path().extension() == ".pth" && !interpolator(e.path().stem().string()) && !detector(e.path().stem().string())) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The model's output under `policy` for `frame` [1, C, H, W], whole (tile 0, padded to the
// model's size multiple as the tiler does) or tiled.
at::Tensor under(ConvLayoutPolicy policy, fm::ImageModel& model, const at::Tensor& frame, int tile) {
  PolicyScope scope(policy);
  return fi::upscale_tiled(model, frame.squeeze(0), {.tile = tile, .overlap = -1});
}

const char* name_of(ConvLayoutPolicy p) {
  switch (p) {
    case ConvLayoutPolicy::Auto: return "auto";
    case ConvLayoutPolicy::ChannelsLast: return "channels-last";
    case ConvLayoutPolicy::LargeNchw: return "large-nchw";
    case ConvLayoutPolicy::Nchw: return "nchw";
  }
  return "?";
}

// tiles: 0 (whole) and/or a tile size; bf16 where the architecture's declaration runs it.
void check_against_nchw(fm::ImageModel& model, const at::Tensor& frame, const std::string& name, std::vector<int> tiles) {
  at::InferenceMode guard;
  const framelift::arch::Declaration* d = framelift::arch::find_declaration(model.info().arch);
  const bool bf16 = d && d->runs_in(framelift::arch::Precision::Bf16);
  for (int tile : tiles) {
    if (tile && !model.info().tiled) continue;
    model.to(c10::kCPU, at::kFloat);
    const at::Tensor reference = under(ConvLayoutPolicy::Nchw, model, frame, tile);
    // Whole: the default (auto) and the large-kernel path; tiled: the large-kernel path, the one
    // this CPU may not take by itself. Everything channels-last is what the architecture tests
    // hold to upstream already.
    const std::vector<ConvLayoutPolicy> policies = tile ? std::vector{ConvLayoutPolicy::LargeNchw}
                                                        : std::vector{ConvLayoutPolicy::Auto, ConvLayoutPolicy::LargeNchw};
    for (ConvLayoutPolicy p : policies) {
      SCOPED_TRACE(testing::Message() << name << " " << frame.size(3) << "x" << frame.size(2) << ", fp32, " << name_of(p)
                                      << (tile ? ", 37 px tiles" : ", whole"));
      const double db = ft::psnr_in_range(under(p, model, frame, tile), reference);
      EXPECT_GE(db, 80.0) << "against the same network in plain NCHW fp32";
    }
    if (!bf16 || tile) continue;
    model.to(c10::kCPU, at::kBFloat16);
    SCOPED_TRACE(testing::Message() << name << " " << frame.size(3) << "x" << frame.size(2) << ", bf16, auto" << (tile ? ", 37 px tiles" : ", whole"));
    const double bf16 = ft::psnr_in_range(under(ConvLayoutPolicy::Auto, model, frame.to(at::kBFloat16), tile).to(at::kFloat), reference);
    std::cout << name << (tile ? " tiled" : " whole") << ": bf16 per-layer vs nchw fp32 " << bf16 << " dB\n";
    EXPECT_GE(bf16, 40.0);
  }
}

TEST(ArchLayout, EveryReferenceAgreesWithPlainNchwFp32InEveryLayout) {
  fi::configure_cpu_threads(0);
  for (const fs::path& pth : image_references()) {
    const std::string name = pth.stem().string();
    const auto io = framelift::weights::load_weights(ft::arch_reference_dir() / (name + ".ref.safetensors"));
    auto model = fm::load_model(pth);
    check_against_nchw(*model, io.at("input"), name, {0, 37});
  }
}

// PLKSR at its published size (64 channels, 28 blocks, 17x17 over 16 of them), in upstream's key
// layout with seeded weights: where the large-kernel path matters.
framelift::weights::StateDict published_plksr() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3701);
  framelift::weights::StateDict d;
  auto conv = [&](const std::string& p, int64_t in, int64_t out, int64_t k) {
    d[p + ".weight"] = at::randn({out, in, k, k}, gen) * std::sqrt(1.0 / double(in * k * k));
    d[p + ".bias"] = at::randn({out}, gen) * 0.1;
  };
  conv("feats.0", 3, 64, 3);
  for (int b = 1; b <= 28; ++b) {
    const std::string p = "feats." + std::to_string(b);
    conv(p + ".channe_mixer.0", 64, 128, 3);
    conv(p + ".channe_mixer.2", 128, 64, 1);
    conv(p + ".lk.conv", 16, 16, 17);
    conv(p + ".attn.f.0", 64, 64, 3);
    conv(p + ".refine", 64, 64, 1);
  }
  conv("feats.29", 64, 48, 3);
  return d;
}

TEST(ArchLayout, PublishedSizePlksrAgreesAndReportsItsLargeKernelsPath) {
  fi::configure_cpu_threads(0);
  auto model = fm::build_model(published_plksr(), "plksr-d64-x4");
  // Whole frames only: its context (the declared tile overlap) is wider than this crop, and the
  // committed PLKSRs cover the tile seams.
  check_against_nchw(*model, ft::real_frame(37, 29), "plksr-d64-x4", {0});
  {
    PolicyScope scope(ConvLayoutPolicy::LargeNchw);
    const auto report = fm::cpu_layer_report(*model, "plksr");
    std::cout << report.dump(2) << "\n";
    bool found = false;
    for (const auto& c : report["convolutions"]) {
      if (c["layer"] != "17x17 conv 16->16") continue;
      found = true;
      EXPECT_EQ(c["calls"], 28);
      EXPECT_EQ(c["layout"], "nchw");
      EXPECT_EQ(c["summary"], "17x17 conv 16->16 x28: nchw");
    }
    EXPECT_TRUE(found) << report.dump();
    EXPECT_EQ(report["input"], "64x64");
  }
  // Under auto the 17x17 is timed: either layout, and the timings say which.
  const auto report = fm::cpu_layer_report(*model, "plksr");
  for (const auto& c : report["convolutions"]) {
    if (c["layer"] == "17x17 conv 16->16") {
      EXPECT_NE(c["why"].get<std::string>().find("measured at 64x64"), std::string::npos) << c.dump();
    }
  }
}

}  // namespace
