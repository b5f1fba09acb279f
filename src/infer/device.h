#pragma once
// Where and in what precision a model runs: `--device cpu|cuda|cuda:N|auto` and
// `--precision fp32|fp16|bf16`.
//
// The same source builds against Debian's CPU-only libtorch 1.13 and PyTorch's CUDA libtorch 2.x.
// Everything CUDA-specific is decided at run time (torch::cuda::is_available()); the few calls that
// need CUDA headers (streams, free memory) sit behind FRAMELIFT_WITH_CUDA, which CMake defines
// only when libtorch was built with CUDA.
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace framelift::infer {

struct ExecutionTarget {
  c10::Device device = c10::kCPU;
  c10::ScalarType dtype = c10::kFloat;
  // Why this precision: "--precision fp32", "auto: AVX512-BF16 on this CPU", "auto: CUDA", ...
  std::string precision_reason;
  // fp32 3x3 convolutions by Winograd F(4x4, 3x3) (infer/winograd_conv.h): what `auto` takes on a
  // CPU without bf16, for networks that run in bf16 where it is fast. Never under --precision fp32.
  bool winograd = false;
  bool is_cuda() const { return device.is_cuda(); }
  std::string describe() const;  // "cpu fp32", "cuda:0 fp16 (NVIDIA H100 80GB HBM3)"
  // describe() and why: "cpu bf16 (auto: AVX512-BF16 on this CPU; --precision fp32 for ...)".
  std::string describe_with_reason() const;
};

// What a network runs in besides fp32 (its architecture's declaration, src/arch/), for auto.
struct ReducedPrecisions {
  bool bf16 = true, fp16 = true;
};

// device: "auto" (CUDA when present, else CPU), "cpu", "cuda", "cuda:N".
// precision: "auto" or "" (the default): fp16 on CUDA, bf16 on CPUs that multiply bf16 natively
// (cpu_features.h), fp32 elsewhere, each only where the network runs in it (`reduced`), and fp32
// with Winograd 3x3 convolutions where bf16 would run but the CPU lacks it (see `winograd`);
// "fp32" (the reference path: direct convolutions), "fp16", "bf16".
// Throws Error(Usage) for malformed values, Error(Resource) for a CUDA device that is not there,
// and for fp16 on CPU (libtorch has no fp16 convolutions on CPU).
ExecutionTarget resolve_target(const std::string& device, const std::string& precision,
                               const ReducedPrecisions& reduced = {});

// Process-wide settings for a target, once per device: cuDNN autotuning and TF32 on CUDA.
void prepare_device(const ExecutionTarget& target);

// A CPU frame on its way to the target: on CUDA it goes through pinned memory with an
// asynchronous copy, so the upload overlaps the host's work.
at::Tensor to_target(const at::Tensor& frame, const ExecutionTarget& target);

// Waits for the device's queued work (no-op on CPU): timing a CUDA call needs it, since kernels
// run asynchronously; only the profiler does it, as it costs the overlap.
void synchronize_device(const c10::Device& device);

// Free bytes on a CUDA device (0 when unknown or not CUDA).
int64_t free_device_memory(const c10::Device& device);

// Bytes held by tensors on `device` now / at peak since the last reset: the CUDA caching
// allocator's statistics on CUDA, the host tracker (infer/memory_budget.h) on CPU.
int64_t device_memory_in_use(const c10::Device& device);
int64_t device_memory_peak(const c10::Device& device);
void reset_device_memory_peak(const c10::Device& device);

// --max-memory on CUDA: caps the caching allocator of the target's device at `bytes`, so that an
// allocation beyond it fails as an OOM (which the tiler answers). No-op on CPU (see memory_budget.h).
void limit_device_memory(const ExecutionTarget& target, int64_t bytes);

// Returns cached, unused CUDA blocks to the driver (after an OOM, before a retry); no-op on CPU.
void release_cached_device_memory();

std::string precision_name(c10::ScalarType dtype);

// The inference stack's versions for manifests: "" where not present (no CUDA on this build or
// machine). Driver and runtime are CUDA's as numbers like "12.4".
struct RuntimeVersions {
  std::string libtorch, cuda_runtime, cudnn, driver;
};
RuntimeVersions runtime_versions();

// Total memory of a CUDA device in bytes (0 when not CUDA or unknown).
int64_t total_device_memory(const c10::Device& device);

// Whether this libtorch was built with CUDA (PyTorch's CUDA libtorch; Debian's is CPU-only):
// without it no GPU is ever used, whatever the machine has.
bool libtorch_has_cuda();

// The CUDA devices libtorch sees, by index; empty on a CPU-only build or a machine without one.
struct CudaDeviceInfo {
  int index = 0;
  std::string name;         // "NVIDIA H100 80GB HBM3"; "" when the properties cannot be read
  int64_t total_bytes = 0;  // 0 when unknown
};
std::vector<CudaDeviceInfo> cuda_devices();

}  // namespace framelift::infer
