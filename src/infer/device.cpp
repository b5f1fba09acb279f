#include "infer/device.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/cuda.h>
#include <torch/version.h>
#include <ATen/ATen.h>
#include <ATen/Context.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <set>

#if defined(FRAMELIFT_WITH_CUDA)
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

#include "infer/conv_layout.h"
#include "infer/memory_budget.h"
#include "infer/winograd_conv.h"
#include "util/cpu_features.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::infer {
namespace {

// `auto`: the fastest precision that keeps the result visually the fp32 one (the quality gates in
// tests/models hold every built-in network to >= 40 dB against fp32).
c10::ScalarType auto_precision(bool cuda, const ReducedPrecisions& reduced, std::string& reason) {
  if (cuda) {
    reason = reduced.fp16 ? "auto: CUDA" : "auto: the network has no fp16 path";
    return reduced.fp16 ? c10::kHalf : c10::kFloat;
  }
  const CpuBf16Support cpu = cpu_bf16_support();
  if (!cpu.fast) {
    reason = str("auto: ", cpu.why, " on this CPU");
    return c10::kFloat;
  }
  if (!reduced.bf16) {
    reason = "auto: the network has no bf16 path";
    return c10::kFloat;
  }
  reason = str("auto: ", cpu.why, " on this CPU; --precision fp32 for the exact reference");
  return c10::kBFloat16;
}

c10::ScalarType parse_precision(const std::string& text, bool cuda, const ReducedPrecisions& reduced, std::string& reason) {
  if (text.empty() || text == "auto") return auto_precision(cuda, reduced, reason);
  reason = "--precision " + text;
  if (text == "fp32" || text == "float32") return c10::kFloat;
  if (text == "fp16" || text == "float16" || text == "half") return c10::kHalf;
  if (text == "bf16" || text == "bfloat16") return c10::kBFloat16;
  throw Error(ErrorKind::Usage, str("--precision: expected auto, fp32, fp16 or bf16, got '", text, "'"));
}

c10::Device parse_device(const std::string& text) {
  const int64_t count = static_cast<int64_t>(torch::cuda::device_count());
  if (text == "auto" || text.empty()) return count > 0 ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  if (text == "cpu") return c10::kCPU;
  if (text.rfind("cuda", 0) != 0)
    throw Error(ErrorKind::Usage, str("--device: expected cpu, cuda, cuda:N or auto, got '", text, "'"));
  int64_t index = 0;
  if (text.size() > 4) {
    const std::string n = text.substr(text[4] == ':' ? 5 : 4);
    if (text[4] != ':' || n.empty() || n.find_first_not_of("0123456789") != std::string::npos)
      throw Error(ErrorKind::Usage, str("--device: expected cuda:N with a device number, got '", text, "'"));
    index = std::stoll(n);
  }
  if (count == 0)
    throw Error(ErrorKind::Resource, str("--device ", text, ": no CUDA device is available (this libtorch ",
                                         torch::cuda::is_available() ? "sees no GPU" : "has no CUDA support or sees no GPU",
                                         "); use --device cpu"));
  if (index >= count)
    throw Error(ErrorKind::Resource, str("--device ", text, ": only ", count, " CUDA device(s) present"));
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

}  // namespace

std::string precision_name(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::kHalf: return "fp16";
    case c10::kBFloat16: return "bf16";
    case c10::kFloat: return "fp32";
    default: return c10::toString(dtype);
  }
}

std::string ExecutionTarget::describe() const { return framelift::str(device.str(), " ", precision_name(dtype)); }

std::string ExecutionTarget::describe_with_reason() const {
  return precision_reason.empty() ? describe() : framelift::str(describe(), " (", precision_reason, ")");
}

ExecutionTarget resolve_target(const std::string& device, const std::string& precision, const ReducedPrecisions& reduced) {
  ExecutionTarget t;
  t.device = parse_device(device);
  t.dtype = parse_precision(precision, t.device.is_cuda(), reduced, t.precision_reason);
  // Where auto would have taken bf16 had the CPU had it, its fp32 takes Winograd instead: the
  // network tolerates reduced precision, and Winograd's rounding is far below bf16's (8-bit
  // outputs within one code of fp32's; tests/models/winograd_models_test.cpp).
  const bool automatic = precision.empty() || precision == "auto";
  const ConvAlgoPolicy algo = conv_algo_policy();  // a wrong FRAMELIFT_CONV_ALGO fails here, before any work
  t.winograd = automatic && !t.device.is_cuda() && t.dtype == c10::kFloat && reduced.bf16 &&
               !cpu_bf16_support().fast && winograd::vector_width() > 0 && algo != ConvAlgoPolicy::Direct;
  if (t.winograd) t.precision_reason += "; 3x3 convolutions by Winograd F(4x4,3x3), --precision fp32 for the exact reference";
  if (!t.device.is_cuda() && t.dtype == c10::kHalf)
    throw Error(ErrorKind::Usage, "--precision fp16 needs a CUDA device (libtorch has no fp16 convolutions on CPU); use fp32 or bf16");
  conv_layout_policy();  // a wrong FRAMELIFT_CONV_LAYOUT fails here, before any work
  return t;
}

void prepare_device(const ExecutionTarget& target) {
  static std::once_flag cuda_once;
  if (!target.is_cuda()) {
    install_cpu_memory_tracker();  // for its block cache: see memory_budget.h
    return;
  }
  std::call_once(cuda_once, [] {
    // Frames of one job all have the same size, so cuDNN's per-shape autotuning pays for itself
    // after the first frame. TF32 matters only for fp32 runs, where it is what users expect.
    at::globalContext().setBenchmarkCuDNN(true);
    at::globalContext().setAllowTF32CuDNN(true);
    at::globalContext().setAllowTF32CuBLAS(true);
  });
}

#if defined(FRAMELIFT_WITH_CUDA)
namespace {

// A host-to-device copy queued on the compute stream would wait behind the previous frame's
// kernels; on a stream of its own it runs beside them, and only the compute stream waits for it
// (an event, not the host).
at::Tensor upload_beside_compute(const at::Tensor& pinned, const ExecutionTarget& target) {
  const c10::DeviceIndex index = target.device.has_index() ? target.device.index() : c10::cuda::current_device();
  c10::cuda::CUDAStream compute = c10::cuda::getCurrentCUDAStream(index);
  c10::cuda::CUDAStream copy = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index);
  at::Tensor out;
  {
    c10::cuda::CUDAStreamGuard on_copy(copy);
    out = pinned.to(target.device, target.dtype, /*non_blocking=*/true);
  }
  at::cuda::CUDAEvent copied;
  copied.record(copy);
  copied.block(compute);
  // Allocated on the copy stream, used on the compute stream: the caching allocator must not hand
  // the block out again before the compute stream is done with it.
  c10::cuda::CUDACachingAllocator::recordStream(out.storage().data_ptr(), compute);
  return out;
}

}  // namespace
#endif

at::Tensor to_target(const at::Tensor& frame, const ExecutionTarget& target) {
  if (!target.is_cuda()) return frame.to(target.device, target.dtype);
  if (frame.is_cuda()) return frame.to(target.device, target.dtype, /*non_blocking=*/true);
  // Pinned (page-locked) memory is what lets the copy run asynchronously with the host.
  at::Tensor pinned = frame.is_pinned() ? frame : frame.pin_memory();
#if defined(FRAMELIFT_WITH_CUDA)
  return upload_beside_compute(pinned, target);
#else
  return pinned.to(target.device, target.dtype, /*non_blocking=*/true);
#endif
}

void synchronize_device(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

namespace {

std::string cuda_version(long v) {  // 12040 -> "12.4"; cuDNN 8902 -> "8.9.2" is left as a number
  return v <= 0 ? std::string() : str(v / 1000, ".", (v % 1000) / 10);
}

}  // namespace

RuntimeVersions runtime_versions() {
  RuntimeVersions v;
  v.libtorch = TORCH_VERSION;
  if (!torch::cuda::is_available()) return v;
  const auto& hooks = at::detail::getCUDAHooks();
  v.cuda_runtime = cuda_version(hooks.versionCUDART());
  if (hooks.compiledWithCuDNN()) v.cudnn = str(hooks.versionCuDNN());
#if defined(FRAMELIFT_WITH_CUDA)
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess) v.driver = cuda_version(driver);
#endif
  return v;
}

int64_t total_device_memory(const c10::Device& device) {
#if defined(FRAMELIFT_WITH_CUDA)
  if (!device.is_cuda()) return 0;
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device.index() < 0 ? 0 : device.index()) != cudaSuccess) return 0;
  return static_cast<int64_t>(prop.totalGlobalMem);
#else
  (void)device;
  return 0;
#endif
}

bool libtorch_has_cuda() {
#if defined(FRAMELIFT_WITH_CUDA)
  return true;
#else
  return false;
#endif
}

std::vector<CudaDeviceInfo> cuda_devices() {
  std::vector<CudaDeviceInfo> devices;
  const int count = static_cast<int>(torch::cuda::device_count());
  for (int i = 0; i < count; ++i) {
    CudaDeviceInfo d;
    d.index = i;
#if defined(FRAMELIFT_WITH_CUDA)
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) {
      d.name = prop.name;
      d.total_bytes = static_cast<int64_t>(prop.totalGlobalMem);
    }
#endif
    devices.push_back(d);
  }
  return devices;
}

int64_t free_device_memory(const c10::Device& device) {
#if defined(FRAMELIFT_WITH_CUDA)
  if (!device.is_cuda()) return 0;
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) return 0;
  cudaSetDevice(device.index() < 0 ? 0 : device.index());
  size_t free_bytes = 0, total = 0;
  cudaError_t rc = cudaMemGetInfo(&free_bytes, &total);
  cudaSetDevice(previous);
  return rc == cudaSuccess ? static_cast<int64_t>(free_bytes) : 0;
#else
  (void)device;
  return 0;
#endif
}

#if defined(FRAMELIFT_WITH_CUDA)
namespace {
using c10::cuda::CUDACachingAllocator::StatType;
const c10::cuda::CUDACachingAllocator::Stat& allocated(const c10::Device& device,
                                                        c10::cuda::CUDACachingAllocator::DeviceStats& stats) {
  stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index() < 0 ? 0 : device.index());
  return stats.allocated_bytes[static_cast<size_t>(StatType::AGGREGATE)];
}
}  // namespace
#endif

int64_t device_memory_in_use(const c10::Device& device) {
#if defined(FRAMELIFT_WITH_CUDA)
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::DeviceStats stats;
    return allocated(device, stats).current;
  }
#endif
  return device.is_cpu() ? cpu_memory_in_use() : 0;
}

int64_t device_memory_peak(const c10::Device& device) {
#if defined(FRAMELIFT_WITH_CUDA)
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::DeviceStats stats;
    return allocated(device, stats).peak;
  }
#endif
  return device.is_cpu() ? cpu_memory_peak() : 0;
}

void reset_device_memory_peak(const c10::Device& device) {
#if defined(FRAMELIFT_WITH_CUDA)
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index() < 0 ? 0 : device.index());
    return;
  }
#endif
  if (device.is_cpu()) reset_cpu_memory_peak();
}

void limit_device_memory(const ExecutionTarget& target, int64_t bytes) {
#if defined(FRAMELIFT_WITH_CUDA)
  if (!target.is_cuda() || bytes <= 0) return;
  const int index = target.device.index() < 0 ? 0 : target.device.index();
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess || total == 0) return;
  c10::cuda::CUDACachingAllocator::setMemoryFraction(std::min(1.0, double(bytes) / double(total)), index);
#else
  (void)target;
  (void)bytes;
#endif
}

void release_cached_device_memory() {
  release_cached_cpu_memory();
#if defined(FRAMELIFT_WITH_CUDA)
  if (torch::cuda::is_available()) c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

}  // namespace framelift::infer
