// Winograd F(4x4, 3x3) (infer/winograd_conv.h) against the direct fp32 convolution, checkasm-style:
// random inputs at odd sizes (partial tiles on the right and bottom edges), single-pixel images,
// channel counts of every network that takes it, images of many blocks (block seams), a batch of
// two, both kernels where the CPU has them (AVX-512 and AVX2), bias and the fused activations.
// Tolerance, stated once: |winograd - direct| <= 1e-5 * max|direct| + 2e-6 * (|x| conv |w|) at
// that output, the second term being the magnitude the sum is rounded against.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <optional>

#include "infer/conv_layout.h"
#include "infer/winograd_conv.h"
#include "infer/winograd_f43.h"
#include "util/error.h"
#include "util/str.h"

namespace fi = framelift::infer;
namespace fw = framelift::infer::winograd;

namespace {

struct Case {
  int64_t n, c, k, h, w;
};
// Compact's 64->64 and its last 64->12 (x2) and 64->48 (x4), RRDB's dense-block inputs 64..192 ->
// 32 and its 64->64, a 1x1 and a 2x3 image (one partial tile), sizes of many blocks, a batch of 2.
const Case kCases[] = {{1, 64, 64, 37, 29},  {1, 64, 12, 23, 41}, {1, 64, 48, 17, 9},   {1, 96, 32, 19, 21},
                       {1, 192, 32, 13, 11}, {1, 160, 64, 9, 14}, {1, 64, 64, 1, 1},    {1, 32, 16, 2, 3},
                       {1, 64, 64, 97, 67},  {2, 32, 3, 45, 31},  {1, 16, 64, 130, 7},  {2, 128, 64, 33, 50}};

class PolicyScope {
 public:
  explicit PolicyScope(fi::ConvAlgoPolicy p) { fi::set_conv_algo_policy(p); }
  ~PolicyScope() { fi::set_conv_algo_policy(std::nullopt); }
};

struct WidthCap {
  explicit WidthCap(int w) { fw::cap_vector_width(w); }
  ~WidthCap() { fw::cap_vector_width(0); }
};

std::vector<int> kernel_widths() {
  std::vector<int> widths;
  for (int w : {16, 8}) {
    WidthCap cap(w);
    if (fw::vector_width() == w) widths.push_back(w);
  }
  return widths;
}

// The stated tolerance, with the worst ratio of error to bound for the failure message.
void expect_agrees(const at::Tensor& got, const at::Tensor& x, const at::Tensor& w, const at::Tensor& want,
                   const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const at::Tensor magnitude = at::conv2d(x.abs(), w.abs(), {}, 1, 1);
  const at::Tensor bound = 1e-5 * want.abs().max() + 2e-6 * magnitude + 1e-30;
  const at::Tensor ratio = (got - want).abs() / bound;
  const double worst = ratio.max().item<double>();
  EXPECT_LE(worst, 1.0) << what << ": worst |error| / bound " << worst << ", max |error| "
                        << (got - want).abs().max().item<double>();
  EXPECT_TRUE(got.is_contiguous(at::MemoryFormat::ChannelsLast)) << what;
}

TEST(Winograd, MatchesTheDirectConvolutionAtOddSizesAndSeams) {
  const auto widths = kernel_widths();
  ASSERT_FALSE(widths.empty()) << "no AVX2 on this CPU: Winograd is off here, nothing to check";
  at::manual_seed(7);
  for (int width : widths) {
    WidthCap cap(width);
    for (const Case& c : kCases) {
      if (!fw::supports(c.c)) continue;
      const at::Tensor x = at::randn({c.n, c.c, c.h, c.w}).contiguous(at::MemoryFormat::ChannelsLast) * 3;
      const at::Tensor w = at::randn({c.k, c.c, 3, 3}) / std::sqrt(9.0 * c.c);
      const at::Tensor b = at::randn({c.k});
      const at::Tensor want = at::conv2d(x, w, b, 1, 1);
      const std::string what = framelift::str("width ", width, ", ", c.n, "x", c.c, "x", c.h, "x", c.w, " -> ", c.k);
      expect_agrees(fi::winograd_conv2d(x, w, b), x, w, want, what);
      expect_agrees(fi::winograd_conv2d(x.contiguous(), w, {}), x, w, at::conv2d(x, w, {}, 1, 1), what + ", NCHW in, no bias");
    }
  }
}

TEST(Winograd, FusesPReLUAndLeakyReLUAfterTheBias) {
  at::manual_seed(11);
  for (int width : kernel_widths()) {
    WidthCap cap(width);
    const at::Tensor x = at::randn({1, 64, 21, 19}).contiguous(at::MemoryFormat::ChannelsLast);
    const at::Tensor w = at::randn({12, 64, 3, 3}) / 24.0;
    const at::Tensor b = at::randn({12});
    const at::Tensor slopes = at::rand({12});
    const at::Tensor direct = at::conv2d(x, w, b, 1, 1);
    expect_agrees(fi::winograd_conv2d(x, w, b, fw::Activation::PerChannel, slopes), x, w, at::prelu(direct, slopes),
                  framelift::str("width ", width, ", prelu"));
    expect_agrees(fi::winograd_conv2d(x, w, b, fw::Activation::Uniform, {}, 0.2f), x, w, at::leaky_relu(direct, 0.2),
                  framelift::str("width ", width, ", leaky"));
  }
}

// Large values (a network's unnormalised features) keep the relative agreement.
TEST(Winograd, KeepsItsAgreementAtLargeMagnitudes) {
  at::manual_seed(3);
  const at::Tensor x = (at::randn({1, 64, 29, 31}) * 1000).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor w = at::randn({64, 64, 3, 3});
  expect_agrees(fi::winograd_conv2d(x, w, {}), x, w, at::conv2d(x, w, {}, 1, 1), "x1000");
}

// The transformed weights are cached by tensor; writing to the weights, or a new tensor at a
// freed one's address, must not return the old transform.
TEST(Winograd, SeesWeightsChangedInPlaceAndNewTensors) {
  at::manual_seed(5);
  const at::Tensor x = at::randn({1, 32, 9, 11}).contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor w = at::randn({16, 32, 3, 3});
  fi::winograd_conv2d(x, w, {});
  w.mul_(-2);
  expect_agrees(fi::winograd_conv2d(x, w, {}), x, w, at::conv2d(x, w, {}, 1, 1), "after mul_");
  for (int i = 0; i < 4; ++i) {
    const at::Tensor fresh = at::randn({16, 32, 3, 3});
    expect_agrees(fi::winograd_conv2d(x, fresh, {}), x, fresh, at::conv2d(x, fresh, {}, 1, 1), "fresh tensor");
  }
}

// infer::conv2d takes Winograd only inside a scope (or when forced), only for what it applies to,
// and returns the input's layout.
TEST(Winograd, RunsWhereThePolicyAndScopeSay) {
  at::manual_seed(9);
  const at::Tensor x = at::randn({1, 32, 13, 15}).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor w = at::randn({16, 32, 3, 3});
  const at::Tensor b = at::randn({16});
  const at::Tensor direct = at::conv2d(x, w, b, 1, 1);
  EXPECT_FALSE(fi::winograd_applies(x, w, 1, 1, 1, 1)) << "no scope: the direct convolution";
  {
    fi::WinogradScope on(true);
    EXPECT_TRUE(fi::winograd_applies(x, w, 1, 1, 1, 1));
    EXPECT_FALSE(fi::winograd_applies(x, w, 2, 1, 1, 1)) << "stride 2";
    EXPECT_FALSE(fi::winograd_applies(x, w, 1, 0, 1, 1)) << "no padding";
    EXPECT_FALSE(fi::winograd_applies(x, w, 1, 1, 2, 1)) << "dilation";
    EXPECT_FALSE(fi::winograd_applies(x.to(at::kBFloat16), w.to(at::kBFloat16), 1, 1, 1, 1)) << "bf16";
    EXPECT_FALSE(fi::winograd_applies(x.narrow(1, 0, 3), w.narrow(1, 0, 3), 1, 1, 1, 1)) << "3 input channels";
    EXPECT_FALSE(fi::winograd_applies(x, at::randn({16, 32, 5, 5}), 1, 1, 1, 1)) << "5x5";
    {
      fi::WinogradScope off(false);
      EXPECT_FALSE(fi::winograd_applies(x, w, 1, 1, 1, 1)) << "an inner scope that is off";
    }
    EXPECT_TRUE(fi::winograd_applies(x, w, 1, 1, 1, 1)) << "the outer scope again";
    PolicyScope direct_only(fi::ConvAlgoPolicy::Direct);
    EXPECT_FALSE(fi::winograd_applies(x, w, 1, 1, 1, 1)) << "FRAMELIFT_CONV_ALGO=direct wins over a scope";
  }
  PolicyScope forced(fi::ConvAlgoPolicy::Winograd);
  EXPECT_TRUE(fi::winograd_applies(x, w, 1, 1, 1, 1));
  const at::Tensor nchw = fi::conv2d(x.contiguous(), w, b, 1, 1);
  EXPECT_TRUE(nchw.is_contiguous()) << "an NCHW input gets NCHW back";
  expect_agrees(nchw.contiguous(at::MemoryFormat::ChannelsLast), x, w, direct, "through infer::conv2d");
}

TEST(Winograd, ParsesItsPolicy) {
  EXPECT_EQ(fi::parse_conv_algo_policy(""), fi::ConvAlgoPolicy::Auto);
  EXPECT_EQ(fi::parse_conv_algo_policy("direct"), fi::ConvAlgoPolicy::Direct);
  EXPECT_EQ(fi::parse_conv_algo_policy("winograd"), fi::ConvAlgoPolicy::Winograd);
  EXPECT_FALSE(fi::parse_conv_algo_policy("fast"));
}

}  // namespace
