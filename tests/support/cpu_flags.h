#pragma once
// What /proc/cpuinfo says about bf16 matrix support, read independently of framelift's own
// detection (src/util/cpu_features.cpp), so tests of `--precision auto` check it against the
// machine rather than against itself.
#include <fstream>
#include <string>

namespace framelift::test {

inline bool cpu_flags_have_bf16() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0)
      return line.find(" amx_bf16") != std::string::npos || line.find(" avx512_bf16") != std::string::npos;
  return false;
}

// AVX2 and FMA: where framelift's Winograd kernel runs (src/infer/winograd_f43.cpp).
inline bool cpu_flags_have_avx2_fma() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) return line.find(" avx2") != std::string::npos && line.find(" fma") != std::string::npos;
  return false;
}

}  // namespace framelift::test
