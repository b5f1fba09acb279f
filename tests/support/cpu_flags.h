#pragma once
// What /proc/cpuinfo says about the CPU's vector features, read independently of framelift's own
// detection (src/util/cpu_features.cpp, src/infer/winograd_f43.cpp), so tests of what `--precision
// auto` chooses check it against the machine rather than against itself.
#include <fstream>
#include <string>

namespace framelift::test {

// The first "flags" line of /proc/cpuinfo with a space at each end, so " name " finds a whole
// flag ("" when there is none).
inline std::string cpu_flags_line() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) return line + " ";
  return "";
}

inline bool cpu_flags_have_bf16() {
  const std::string flags = cpu_flags_line();
  return flags.find(" amx_bf16 ") != std::string::npos || flags.find(" avx512_bf16 ") != std::string::npos;
}

// AVX2 and FMA: where framelift's Winograd kernel runs (src/infer/winograd_f43.cpp).
inline bool cpu_flags_have_avx2_fma() {
  const std::string flags = cpu_flags_line();
  return flags.find(" avx2 ") != std::string::npos && flags.find(" fma ") != std::string::npos;
}

}  // namespace framelift::test
