#pragma once
// Winograd F(4x4, 3x3) (infer/winograd_f43.h) for at::Tensor: the fp32 CPU path `--precision
// auto` takes for 3x3 convolutions where the CPU has no bf16 (docs/performance.md, "Winograd").
//
// Who gets it: a thread runs its convolutions by Winograd while a WinogradScope with `on` is
// alive on it. The model runner opens one for targets whose precision `auto` resolved to fp32 on
// the CPU (ExecutionTarget::winograd); `--precision fp32` stays on the direct convolution, the
// exact reference. FRAMELIFT_CONV_ALGO=auto (default: the scopes decide) | direct (never) |
// winograd (every eligible fp32 CPU convolution, scope or not: tests and benchmarks).
//
// Agreement: against the direct fp32 convolution within 1e-5 of the output's largest magnitude
// plus 1e-5 of the sum of |inputs x weights| (tests/infer/winograd_test.cpp, odd sizes and block
// seams); through a whole Compact or RRDB network, 8-bit outputs equal to the direct path's to
// within one code (tests/models/winograd_models_test.cpp).
// Thread-safety: scopes are per thread; the functions may be called from any thread.
#include <optional>
#include <string_view>

#include <ATen/core/Tensor.h>

#include "infer/winograd_f43.h"

namespace framelift::infer {

enum class ConvAlgoPolicy { Auto, Direct, Winograd };
std::optional<ConvAlgoPolicy> parse_conv_algo_policy(std::string_view text);  // "auto"/"", "direct", "winograd"
// set_conv_algo_policy()'s value, else FRAMELIFT_CONV_ALGO's (an unknown value is an Error(Usage)).
ConvAlgoPolicy conv_algo_policy();
void set_conv_algo_policy(std::optional<ConvAlgoPolicy> policy);

class WinogradScope {
 public:
  explicit WinogradScope(bool on);
  ~WinogradScope();
  WinogradScope(const WinogradScope&) = delete;
  WinogradScope& operator=(const WinogradScope&) = delete;

 private:
  bool previous_;
};

// Whether this call would run by Winograd: the policy and scope allow it, and x and weight are
// fp32 CPU tensors of a 3x3 convolution with stride 1, padding 1, no dilation or groups, whose
// input channels the kernel takes (winograd::supports) and that needs no gradient.
bool winograd_applies(const at::Tensor& x, const at::Tensor& weight, int64_t stride, int64_t padding, int64_t dilation,
                      int64_t groups);

// The convolution by Winograd, any applicable call: x [N, C, H, W] in any layout (taken
// channels-last), weight [K, C, 3, 3], bias [K] or undefined. Returns [N, K, H, W] channels-last.
// activation/slopes: fused after the bias (slopes [K] for PerChannel, slope for Uniform).
at::Tensor winograd_conv2d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                           winograd::Activation activation = winograd::Activation::None,
                           const at::Tensor& slopes = {}, float slope = 0);

}  // namespace framelift::infer
