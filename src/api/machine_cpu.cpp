// The CPU part of machine_report(): what /proc/cpuinfo says, and what `--precision auto` makes of
// it (asked of infer::resolve_target itself, so the report cannot drift from the rule).
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "api/machine_parts.h"
#include "infer/device.h"
#include "infer/threads.h"
#include "util/cpu_features.h"

namespace framelift::api {
namespace {

// The flags that change framelift's speed: AVX2/FMA for oneDNN's fp32 kernels, AVX-512 for wider
// ones, AVX512-BF16 and AMX-BF16 for the bf16 path, VNNI for int8 dot products.
constexpr const char* kFlags[] = {"avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "avx512_vnni"};

std::string value_after_colon(const std::string& line) {
  const auto colon = line.find(':');
  if (colon == std::string::npos) return "";
  const auto start = line.find_first_not_of(" \t", colon + 1);
  return start == std::string::npos ? "" : line.substr(start);
}

bool starts_with(const std::string& line, const char* key) { return line.rfind(key, 0) == 0; }

}  // namespace

CpuReport read_cpu() {
  CpuReport cpu;
  std::ifstream in("/proc/cpuinfo");
  std::set<std::string> flags;
  std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
  std::string physical;
  for (std::string line; std::getline(in, line);) {
    if (starts_with(line, "processor")) ++cpu.logical_cpus;
    else if (starts_with(line, "model name") && cpu.model.empty()) cpu.model = value_after_colon(line);
    else if (starts_with(line, "physical id")) physical = value_after_colon(line);
    else if (starts_with(line, "core id")) cores.insert({physical, value_after_colon(line)});
    else if (starts_with(line, "flags") && flags.empty()) {
      std::istringstream words(value_after_colon(line));
      for (std::string w; words >> w;) flags.insert(w);
    }
  }
  cpu.physical_cores = static_cast<int>(cores.size());
  cpu.usable_threads = infer::usable_cpu_count();
  for (const char* f : kFlags) cpu.flags.emplace_back(f, flags.count(f) > 0);

  const CpuBf16Support bf16 = cpu_bf16_support();
  const infer::ExecutionTarget automatic = infer::resolve_target("cpu", "auto");
  cpu.auto_precision = infer::precision_name(automatic.dtype);
  cpu.auto_winograd = automatic.winograd;
  cpu.auto_precision_why = bf16.why;
  cpu.amx = bf16.amx;
  return cpu;
}

MemoryReport read_memory() {
  MemoryReport memory;
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    int64_t kib = 0;
    in >> kib;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    if (key == "MemTotal:") memory.total_bytes = kib * 1024;
    if (key == "MemAvailable:") memory.available_bytes = kib * 1024;
  }
  return memory;
}

}  // namespace framelift::api
