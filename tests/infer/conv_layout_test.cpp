// The per-layer convolution layouts (infer/conv_layout.h) against plain at::conv2d on NCHW fp32,
// checkasm-style: the same random inputs (odd sizes, large magnitudes) through every policy, in
// fp32 and bf16, each compared with the reference and printed with its parameters on a mismatch;
// the output keeps the input's layout whatever the layer ran in; the choice is made once per shape
// and reported; FRAMELIFT_CONV_LAYOUT's values are parsed (a wrong one named before any work); the gelu and layer_norm routes
// (infer/layout_ops.h, infer/fp32_islands.h) give the plain ops' values.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstdlib>
#include <optional>

#include "infer/conv_layout.h"
#include "infer/device.h"
#include "infer/fp32_islands.h"
#include "infer/layout_ops.h"
#include "util/error.h"

namespace fi = framelift::infer;
using fi::ConvLayoutPolicy;

namespace {

struct Case {
  int64_t in, out, k, stride, groups, h, w;
};

// PLKSR's large kernel, RealPLKSR-tiny's, MoSR's depthwise 7x7 and 5x5, a strided 5x5, and the small
// kernels that keep the network's layout, at odd sizes.
const Case kCases[] = {{16, 16, 17, 1, 1, 37, 29}, {16, 16, 13, 1, 1, 23, 41}, {48, 48, 7, 1, 48, 31, 19}, {24, 24, 5, 1, 24, 17, 33},
                       {8, 12, 5, 2, 1, 29, 27},   {16, 32, 3, 1, 1, 37, 29},  {32, 16, 1, 1, 1, 21, 23}};

// Restores the process's policy when a test ends.
class PolicyScope {
 public:
  explicit PolicyScope(ConvLayoutPolicy p) { fi::set_conv_layout_policy(p); }
  ~PolicyScope() { fi::set_conv_layout_policy(std::nullopt); }
};

const char* policy_name(ConvLayoutPolicy p) {
  switch (p) {
    case ConvLayoutPolicy::Auto: return "auto";
    case ConvLayoutPolicy::ChannelsLast: return "channels-last";
    case ConvLayoutPolicy::LargeNchw: return "large-nchw";
    case ConvLayoutPolicy::Nchw: return "nchw";
  }
  return "?";
}

TEST(ConvLayout, EveryPolicyGivesPlainConvValuesInTheInputsLayout) {
  at::manual_seed(37);
  for (const Case& c : kCases) {
    // Values up to +-64 with a heavy tail: the sums of a 17x17 kernel reach thousands.
    const at::Tensor x = at::randn({1, c.in, c.h, c.w}) * at::randn({1, c.in, c.h, c.w}).abs() * 8;
    const at::Tensor weight = at::randn({c.out, c.in / c.groups, c.k, c.k}) * 0.1, bias = at::randn({c.out});
    const at::Tensor expected = at::conv2d(x, weight, bias, {c.stride, c.stride}, {c.k / 2, c.k / 2}, {1, 1}, c.groups);
    const double scale = expected.abs().max().item<double>();
    for (ConvLayoutPolicy p : {ConvLayoutPolicy::Auto, ConvLayoutPolicy::ChannelsLast, ConvLayoutPolicy::LargeNchw, ConvLayoutPolicy::Nchw}) {
      PolicyScope scope(p);
      for (at::MemoryFormat format : {at::MemoryFormat::Contiguous, at::MemoryFormat::ChannelsLast}) {
        for (c10::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
          SCOPED_TRACE(testing::Message() << c.k << "x" << c.k << " conv " << c.in << "->" << c.out << " groups " << c.groups << " stride "
                                          << c.stride << " on " << c.w << "x" << c.h << ", policy " << policy_name(p) << ", input "
                                          << (format == at::MemoryFormat::Contiguous ? "nchw" : "channels-last") << ", " << dtype);
          const at::Tensor input = x.to(dtype).contiguous(format);
          const at::Tensor y = fi::conv2d(input, weight.to(dtype), bias.to(dtype), c.stride, c.k / 2, 1, c.groups);
          EXPECT_TRUE(y.is_contiguous(format)) << "the output should keep the input's layout";
          const double err = (y.to(at::kFloat) - expected).abs().max().item<double>() / scale;
          // fp32: summation order only; bf16: the inputs' and the output's rounding (8 bits).
          EXPECT_LT(err, dtype == at::kFloat ? 1e-5 : 2e-2) << "max |difference| / max |expected| = " << err;
        }
      }
    }
  }
}

TEST(ConvLayout, LargeKernelsAreTimedOnceAndReportedSmallOnesFollowTheInput) {
  PolicyScope scope(ConvLayoutPolicy::Auto);
  const at::Tensor x = at::rand({1, 16, 40, 40}).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor large = at::randn({16, 16, 11, 11}) * 0.01, small = at::randn({16, 16, 3, 3}) * 0.1;
  fi::ConvLayoutRecorder recorder;
  for (int i = 0; i < 3; ++i) {
    fi::conv2d(x, large, at::Tensor(), 1, 5);
    fi::conv2d(x, small, at::Tensor(), 1, 1);
  }
  fi::conv2d(x.contiguous(), small, at::Tensor(), 1, 1);
  const auto entries = recorder.entries();
  ASSERT_EQ(entries.size(), 3u);
  // Heaviest first: the 11x11 (3 calls), then the 3x3 as channels-last (3), then as nchw (1).
  EXPECT_EQ(entries[0].shape.describe(), "11x11 conv 16->16");
  EXPECT_EQ(entries[0].calls, 3);
  EXPECT_TRUE(entries[0].layout == "nchw" || entries[0].layout == "channels-last") << entries[0].layout;
  EXPECT_NE(entries[0].why.find("measured at 64x64: nchw "), std::string::npos) << entries[0].why;
  EXPECT_EQ(entries[1].shape.describe(), "3x3 conv 16->16");
  EXPECT_EQ(entries[1].layout, "channels-last");
  EXPECT_EQ(entries[1].calls, 3);
  EXPECT_NE(entries[1].why.find("the network's layout"), std::string::npos) << entries[1].why;
  EXPECT_EQ(entries[2].layout, "nchw");
  EXPECT_EQ(entries[2].calls, 1);
}

TEST(ConvLayout, ForcedPoliciesDecideWithoutTiming) {
  const at::Tensor x = at::rand({1, 8, 20, 20}).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor large = at::randn({8, 1, 7, 7}), small = at::randn({8, 8, 3, 3});
  struct Expect {
    ConvLayoutPolicy policy;
    const char *large_layout, *small_layout, *why;
  };
  for (const Expect& e : {Expect{ConvLayoutPolicy::LargeNchw, "nchw", "channels-last", "FRAMELIFT_CONV_LAYOUT=large-nchw"},
                          Expect{ConvLayoutPolicy::ChannelsLast, "channels-last", "channels-last", "FRAMELIFT_CONV_LAYOUT=channels-last"},
                          Expect{ConvLayoutPolicy::Nchw, "nchw", "nchw", "FRAMELIFT_CONV_LAYOUT=nchw"}}) {
    SCOPED_TRACE(policy_name(e.policy));
    PolicyScope scope(e.policy);
    fi::ConvLayoutRecorder recorder;
    fi::conv2d(x, large, at::Tensor(), 1, 3, 1, 8);
    fi::conv2d(x, small, at::Tensor(), 1, 1);
    const auto entries = recorder.entries();
    ASSERT_EQ(entries.size(), 2u);
    const auto& dw = entries[0].shape.kh == 7 ? entries[0] : entries[1];
    const auto& dense = entries[0].shape.kh == 7 ? entries[1] : entries[0];
    EXPECT_EQ(dw.shape.describe(), "7x7 depthwise 8");
    EXPECT_EQ(dw.layout, e.large_layout);
    EXPECT_NE(dw.why.find(e.why), std::string::npos) << dw.why;
    EXPECT_EQ(dense.layout, e.small_layout);
  }
  EXPECT_EQ(fi::activation_format(c10::kCPU), at::MemoryFormat::ChannelsLast);
  PolicyScope nchw(ConvLayoutPolicy::Nchw);
  EXPECT_EQ(fi::activation_format(c10::kCPU), at::MemoryFormat::Contiguous);
}

TEST(ConvLayout, GeluAndLayerNormRoutesGiveThePlainOpsValues) {
  at::manual_seed(3);
  const at::Tensor x = at::randn({2, 24, 13, 17}) * 3;
  for (c10::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    SCOPED_TRACE(dtype);
    const at::Tensor cl = x.to(dtype).contiguous(at::MemoryFormat::ChannelsLast);
    const at::Tensor g = fi::gelu(cl);
    EXPECT_TRUE(g.is_contiguous(at::MemoryFormat::ChannelsLast));
    EXPECT_TRUE(at::equal(g.contiguous(), at::gelu(x.to(dtype))));  // the same kernel on the same values
    const at::Tensor w = at::randn({24}).to(dtype), b = at::randn({24}).to(dtype);
    const at::Tensor tokens = cl.permute({0, 2, 3, 1});
    const at::Tensor n = fi::layer_norm(tokens, {24}, w, b, 1e-5);
    EXPECT_EQ(n.scalar_type(), dtype);
    const at::Tensor exact = at::layer_norm(tokens.to(at::kFloat), {24}, w.to(at::kFloat), b.to(at::kFloat), 1e-5);
    // bf16: one rounding of the fp32 result (8 bits of mantissa), no more.
    const double err = (n.to(at::kFloat) - exact).abs().max().item<double>() / exact.abs().max().item<double>();
    EXPECT_LT(err, dtype == at::kFloat ? 1e-6 : 4e-3) << err;
  }
}

TEST(ConvLayout, EnvironmentValuesAreParsedAndAWrongOneFailsBeforeAnyWork) {
  EXPECT_EQ(fi::parse_conv_layout_policy("auto"), ConvLayoutPolicy::Auto);
  EXPECT_EQ(fi::parse_conv_layout_policy(""), ConvLayoutPolicy::Auto);
  EXPECT_EQ(fi::parse_conv_layout_policy("channels-last"), ConvLayoutPolicy::ChannelsLast);
  EXPECT_EQ(fi::parse_conv_layout_policy("large-nchw"), ConvLayoutPolicy::LargeNchw);
  EXPECT_EQ(fi::parse_conv_layout_policy("nchw"), ConvLayoutPolicy::Nchw);
  EXPECT_FALSE(fi::parse_conv_layout_policy("NCHW").has_value());
  setenv("FRAMELIFT_CONV_LAYOUT", "large-nchw", 1);
  EXPECT_EQ(fi::conv_layout_policy(), ConvLayoutPolicy::LargeNchw);
  {
    PolicyScope forced(ConvLayoutPolicy::Nchw);  // what the speed grid does between calls
    EXPECT_EQ(fi::conv_layout_policy(), ConvLayoutPolicy::Nchw);
  }
  setenv("FRAMELIFT_CONV_LAYOUT", "sideways", 1);
  try {
    fi::resolve_target("cpu", "fp32");
    ADD_FAILURE() << "a wrong FRAMELIFT_CONV_LAYOUT was accepted";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage);
    EXPECT_STREQ(e.what(), "FRAMELIFT_CONV_LAYOUT=sideways: expected auto, channels-last, large-nchw or nchw");
  }
  unsetenv("FRAMELIFT_CONV_LAYOUT");
  EXPECT_EQ(fi::conv_layout_policy(), ConvLayoutPolicy::Auto);
}

}  // namespace
