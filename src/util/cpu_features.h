#pragma once
// Whether this CPU multiplies bf16 matrices natively (AMX-BF16 tiles or AVX512-BF16 dot
// products), which is when `--precision auto` picks bf16 on the CPU: there oneDNN's bf16
// convolutions run about 2x (AVX512-BF16) to 6x (AMX) faster than fp32; without either, bf16 is
// emulated and slower than fp32.
#include <string>

namespace framelift {

struct CpuBf16Support {
  bool fast = false;
  bool amx = false;  // the CPU has AMX-BF16 tiles (whatever FRAMELIFT_CPU_BF16 says): the planner's bf16 peak
  std::string why;  // "AMX-BF16", "AVX512-BF16", "no AMX-BF16 or AVX512-BF16", "FRAMELIFT_CPU_BF16=0"
};

// Read once from /proc/cpuinfo's flags. FRAMELIFT_CPU_BF16=0 or 1 overrides the detection (to
// get the fp32 path on a bf16 machine, or for tests of both choices).
CpuBf16Support cpu_bf16_support();

}  // namespace framelift
