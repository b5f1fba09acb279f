#include "util/cpu_features.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace framelift {
namespace {

CpuBf16Support detect() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    bool amx = false, avx512 = false;
    for (std::string w; words >> w;) {
      amx = amx || w == "amx_bf16";
      avx512 = avx512 || w == "avx512_bf16";
    }
    if (amx) return {true, true, "AMX-BF16"};
    if (avx512) return {true, false, "AVX512-BF16"};
    break;  // every core lists the same flags
  }
  return {false, false, "no AMX-BF16 or AVX512-BF16"};
}

}  // namespace

CpuBf16Support cpu_bf16_support() {
  static const CpuBf16Support detected = detect();
  if (const char* forced = std::getenv("FRAMELIFT_CPU_BF16")) {
    const std::string v = forced;
    if (v == "0") return {false, detected.amx, "FRAMELIFT_CPU_BF16=0"};
    if (v == "1") return {true, detected.amx, "FRAMELIFT_CPU_BF16=1"};
  }
  return detected;
}

}  // namespace framelift
