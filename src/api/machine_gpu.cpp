// The GPU part of machine_report(): what libtorch sees (infer/device.h), and the NVIDIA driver
// the kernel has loaded, which is there or not whatever libtorch was built with: a driver with a
// CPU-only libtorch is the case worth telling the user about.
#include <fstream>
#include <regex>

#include "api/machine_parts.h"
#include "infer/device.h"

namespace framelift::api {
namespace {

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023"
std::string nvidia_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "";
  static const std::regex version(R"(Kernel Module\s+([0-9][0-9.]*))");
  std::smatch m;
  if (std::regex_search(line, m, version)) return m[1];
  return line;  // an unfamiliar layout: the line itself says more than nothing
}

}  // namespace

GpuReport read_gpu() {
  GpuReport gpu;
  gpu.libtorch_cuda = infer::libtorch_has_cuda();
  for (const auto& d : infer::cuda_devices()) gpu.devices.push_back({d.index, d.name, d.total_bytes});
  gpu.nvidia_driver = nvidia_driver_version();
  gpu.cuda_runtime = infer::runtime_versions().cuda_runtime;
  gpu.auto_device = infer::resolve_target("auto", "auto").device.str();
  return gpu;
}

}  // namespace framelift::api
