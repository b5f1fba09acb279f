#pragma once
// The CPU's arithmetic limit, measured (issue 36 item 1): a microkernel per ISA level the CPU has,
// each a set of independent FMA (or dot-product) chains that keep every vector pipe busy and touch
// no memory, on one pinned thread and on one pinned thread per CPU. What layer_peak.cpp divides
// the layers' achieved GFLOP/s by.
//
// Conventions: an fp32 FMA is 2 FLOP per lane; VDPBF16PS adds two bf16 products into each fp32
// lane, 4 FLOP per lane (64 per zmm); VPDPBUSD adds four u8 x s8 products into each int32 lane,
// 8 OP per lane (128 per zmm). Every chain computes a known value (an exact count of its
// additions), checked after each run, so a kernel the compiler folded or that lost lanes fails
// instead of printing a fast number.
#include <string>
#include <vector>

namespace framelift::bench {

struct CpuDescription {
  std::string name;             // /proc/cpuinfo "model name"
  std::string family_model;     // "family 25 model 17"
  std::vector<std::string> isa; // the levels the kernels can use here, as __builtin_cpu_supports names them
  std::vector<int> cpus;        // this process's affinity mask
  double cpuinfo_mhz = 0;       // what the kernel reports (a VM shows its nominal clock)
  double measured_ghz = 0;      // from a chain of dependent 1-cycle integer adds, on one thread's CPU
                                // clock (a VM's stolen time would count, and lower it with the peaks)
};

CpuDescription describe_cpu();
bool has_isa(const CpuDescription& cpu, const std::string& name);

struct Peak {
  std::string kernel;  // "avx512f fp32 fma"
  std::string dtype;   // "fp32", "bf16", "int8"
  int vector_bits = 0;
  int threads = 0;
  double gflops = 0;        // median of the runs (GOP/s for int8): each thread's FLOP over its own CPU
                            // time, summed (a shared machine's other processes do not count)
  double per_core_cycle = 0;  // gflops / threads / measured_ghz: the FLOP a cycle one core retires
  bool value_ok = false;    // every lane of every chain held the expected count
};

// Every kernel the CPU supports, on 1 thread and on `threads` threads (pinned to the first
// `threads` CPUs of the affinity mask), each the median of `runs` runs of about 0.1 s.
std::vector<Peak> measure_peaks(const CpuDescription& cpu, int threads, int runs);

// The highest all-threads figure for `dtype` (0 when none was measured).
double best_peak(const std::vector<Peak>& peaks, const std::string& dtype, int threads);

}  // namespace framelift::bench
