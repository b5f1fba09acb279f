// --device / --precision parsing and the runtime CUDA checks. On this CPU-only machine "cuda"
// must fail with a clear Resource error; where a GPU is present the CUDA cases are checked instead.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "infer/device.h"
#include "infer/winograd_f43.h"
#include "support/cpu_flags.h"
#include "util/error.h"

namespace framelift::infer {
namespace {

ErrorKind kind_of(const std::string& device, const std::string& precision, std::string* message = nullptr) {
  try {
    resolve_target(device, precision);
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  return ErrorKind::Internal;  // "did not throw"
}

// Sets an environment variable for one scope (FRAMELIFT_CPU_BF16 overrides the CPU detection).
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  const char* name_;
};

TEST(Device, CpuAutoIsBf16WhereTheCpuMultipliesItNatively) {
  ExecutionTarget t = resolve_target("cpu", "");
  EXPECT_TRUE(t.device.is_cpu());
  EXPECT_EQ(t.dtype, test::cpu_flags_have_bf16() ? c10::kBFloat16 : c10::kFloat);
  EXPECT_EQ(resolve_target("cpu", "auto").dtype, t.dtype);
  EXPECT_NE(t.precision_reason.find("auto: "), std::string::npos) << t.precision_reason;
  {
    ScopedEnv off("FRAMELIFT_CPU_BF16", "0");
    const ExecutionTarget f = resolve_target("cpu", "");
    EXPECT_EQ(f.dtype, c10::kFloat);
    EXPECT_EQ(f.describe(), "cpu fp32");
    if (framelift::infer::winograd::vector_width() > 0) {
      EXPECT_TRUE(f.winograd);
      EXPECT_EQ(f.describe_with_reason(),
                "cpu fp32 (auto: FRAMELIFT_CPU_BF16=0 on this CPU; 3x3 convolutions by Winograd F(4x4,3x3), --precision fp32 "
                "for the exact reference)");
    } else {
      EXPECT_EQ(f.describe_with_reason(), "cpu fp32 (auto: FRAMELIFT_CPU_BF16=0 on this CPU)");
    }
    EXPECT_FALSE(resolve_target("cpu", "fp32").winograd) << "--precision fp32 is the direct reference";
    EXPECT_FALSE(resolve_target("cpu", "", {.bf16 = false, .fp16 = false}).winograd)
        << "a network declared fp32-only keeps direct convolutions";
    {
      ScopedEnv direct("FRAMELIFT_CONV_ALGO", "direct");
      EXPECT_FALSE(resolve_target("cpu", "").winograd);
    }
  }
  {
    ScopedEnv on("FRAMELIFT_CPU_BF16", "1");
    const ExecutionTarget b = resolve_target("cpu", "");
    EXPECT_EQ(b.dtype, c10::kBFloat16);
    EXPECT_FALSE(b.winograd) << "bf16 where the CPU has it";
    EXPECT_NE(b.describe_with_reason().find("--precision fp32 for the exact reference"), std::string::npos);
    // A network declared without a bf16 path stays fp32 under auto.
    EXPECT_EQ(resolve_target("cpu", "", {.bf16 = false, .fp16 = false}).dtype, c10::kFloat);
  }
  EXPECT_EQ(resolve_target("cpu", "bf16").dtype, c10::kBFloat16);
  EXPECT_EQ(resolve_target("cpu", "fp32").dtype, c10::kFloat);
  EXPECT_EQ(resolve_target("cpu", "fp32").describe_with_reason(), "cpu fp32 (--precision fp32)");
}

TEST(Device, Fp16OnCpuIsRefusedWithAReason) {
  std::string message;
  EXPECT_EQ(kind_of("cpu", "fp16", &message), ErrorKind::Usage);
  EXPECT_NE(message.find("fp16 needs a CUDA device"), std::string::npos) << message;
}

TEST(Device, MalformedValuesAreUsageErrors) {
  EXPECT_EQ(kind_of("gpu", ""), ErrorKind::Usage);
  EXPECT_EQ(kind_of("cuda:x", ""), ErrorKind::Usage);
  EXPECT_EQ(kind_of("cuda:", ""), ErrorKind::Usage);
  EXPECT_EQ(kind_of("cudaa", ""), ErrorKind::Usage);
  EXPECT_EQ(kind_of("cpu", "fp64"), ErrorKind::Usage);
}

TEST(Device, AutoPicksCudaOnlyWhenPresent) {
  ExecutionTarget t = resolve_target("auto", "");
  if (torch::cuda::device_count() > 0) {
    EXPECT_TRUE(t.is_cuda());
    EXPECT_EQ(t.dtype, c10::kHalf);  // fp16 by default on CUDA
  } else {
    EXPECT_TRUE(t.device.is_cpu());
    EXPECT_EQ(t.dtype, test::cpu_flags_have_bf16() ? c10::kBFloat16 : c10::kFloat);
  }
}

TEST(Device, MissingCudaDeviceIsAResourceError) {
  const int64_t count = static_cast<int64_t>(torch::cuda::device_count());
  std::string message;
  if (count == 0) {
    EXPECT_EQ(kind_of("cuda", "", &message), ErrorKind::Resource);
    EXPECT_NE(message.find("no CUDA device"), std::string::npos) << message;
  }
  EXPECT_EQ(kind_of("cuda:" + std::to_string(count), "", &message), ErrorKind::Resource);
}

TEST(Device, CpuTargetCopiesAndConvertsFrames) {
  at::Tensor frame = at::rand({3, 8, 8});
  at::Tensor y = to_target(frame, resolve_target("cpu", "bf16"));
  EXPECT_EQ(y.scalar_type(), c10::kBFloat16);
  EXPECT_LT((y.to(at::kFloat) - frame).abs().max().item<float>(), 1.0f / 128);
}

}  // namespace
}  // namespace framelift::infer
