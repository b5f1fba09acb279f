// Microkernels for the CPU's FMA peak (fma_peak.h). Each kernel is compiled for its ISA with a
// target attribute and called only when cpuid says the CPU (and OS) supports it, so one binary
// measures an AVX2-only EPYC and an AVX-512 Xeon alike.
#include "fma_peak.h"

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

namespace framelift::bench {
namespace {

// Chains per kernel: FMA latency (4 cycles on Zen 4 and Sapphire Rapids, 4-5 elsewhere) times the
// 2 FMA pipes a core has is 8-10 operations in flight; 12 leaves room for a CPU with more.
constexpr int kChains = 12;
// Calls of one kernel count at most this many additions per lane, so that the fp32 counts (<= 2^24
// for exact integers) stay exact: 2^22 x 1 (fma), 2^22 x 2 (dpbf16), 2^22 x 4 (dpbusd, int32).
constexpr uint64_t kIters = uint64_t(1) << 22;

// Read at run time so the compiler cannot fold the chains into a multiplication.
volatile float g_one = 1.0f;
volatile int g_one_i8 = 1;
volatile uint16_t g_one_bf16 = 0x3F80;  // bf16 1.0
// Each chain starts from its own run-time zero: chains that start equal compute the same thing,
// and the compiler merges them into one (a twelfth of the throughput, all latency-bound).
volatile float g_start[kChains] = {};
volatile int g_start_i32[kChains] = {};

#define FL_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

__attribute__((target("avx2,fma"))) bool fp32_avx2(uint64_t iters) {
  const __m256 a = _mm256_set1_ps(g_one), b = _mm256_set1_ps(g_one);
#define FL_DECL(i) __m256 c##i = _mm256_set1_ps(g_start[i]);
  FL_CHAINS(FL_DECL)
#undef FL_DECL
  for (uint64_t n = 0; n < iters; ++n) {
#define FL_STEP(i) c##i = _mm256_fmadd_ps(a, b, c##i);
    FL_CHAINS(FL_STEP)
#undef FL_STEP
  }
  alignas(32) float lanes[8];
  bool ok = true;
#define FL_CHECK(i)                                                      \
  _mm256_store_ps(lanes, c##i);                                          \
  for (float v : lanes) ok = ok && v == float(iters);
  FL_CHAINS(FL_CHECK)
#undef FL_CHECK
  return ok;
}

__attribute__((target("avx512f"))) bool fp32_avx512(uint64_t iters) {
  const __m512 a = _mm512_set1_ps(g_one), b = _mm512_set1_ps(g_one);
#define FL_DECL(i) __m512 c##i = _mm512_set1_ps(g_start[i]);
  FL_CHAINS(FL_DECL)
#undef FL_DECL
  for (uint64_t n = 0; n < iters; ++n) {
#define FL_STEP(i) c##i = _mm512_fmadd_ps(a, b, c##i);
    FL_CHAINS(FL_STEP)
#undef FL_STEP
  }
  alignas(64) float lanes[16];
  bool ok = true;
#define FL_CHECK(i)                                                      \
  _mm512_store_ps(lanes, c##i);                                          \
  for (float v : lanes) ok = ok && v == float(iters);
  FL_CHAINS(FL_CHECK)
#undef FL_CHECK
  return ok;
}

// Each VDPBF16PS lane adds 1*1 + 1*1: after `iters` steps every lane holds 2 * iters.
__attribute__((target("avx512bf16,avx512f"))) bool bf16_avx512(uint64_t iters) {
  const __m512i ones = _mm512_set1_epi16(short(g_one_bf16));
  __m512bh a, b;
  std::memcpy(&a, &ones, sizeof a);
  std::memcpy(&b, &ones, sizeof b);
#define FL_DECL(i) __m512 c##i = _mm512_set1_ps(g_start[i]);
  FL_CHAINS(FL_DECL)
#undef FL_DECL
  for (uint64_t n = 0; n < iters; ++n) {
#define FL_STEP(i) c##i = _mm512_dpbf16_ps(c##i, a, b);
    FL_CHAINS(FL_STEP)
#undef FL_STEP
  }
  alignas(64) float lanes[16];
  bool ok = true;
#define FL_CHECK(i)                                                      \
  _mm512_store_ps(lanes, c##i);                                          \
  for (float v : lanes) ok = ok && v == float(2 * iters);
  FL_CHAINS(FL_CHECK)
#undef FL_CHECK
  return ok;
}

// Each VPDPBUSD lane adds four 1 x 1 products: 4 * iters.
__attribute__((target("avx512vnni,avx512f"))) bool int8_avx512(uint64_t iters) {
  const __m512i a = _mm512_set1_epi8(char(g_one_i8)), b = _mm512_set1_epi8(char(g_one_i8));
#define FL_DECL(i) __m512i c##i = _mm512_set1_epi32(g_start_i32[i]);
  FL_CHAINS(FL_DECL)
#undef FL_DECL
  for (uint64_t n = 0; n < iters; ++n) {
#define FL_STEP(i) c##i = _mm512_dpbusd_epi32(c##i, a, b);
    FL_CHAINS(FL_STEP)
#undef FL_STEP
  }
  alignas(64) int32_t lanes[16];
  bool ok = true;
#define FL_CHECK(i)                                                      \
  _mm512_store_si512(lanes, c##i);                                       \
  for (int32_t v : lanes) ok = ok && v == int32_t(4 * iters);
  FL_CHAINS(FL_CHECK)
#undef FL_CHECK
  return ok;
}

struct Kernel {
  const char* isa;  // what cpuid must report
  const char* name;
  const char* dtype;
  int bits;
  double flop_per_step;  // per chain step: lanes x FLOP per lane
  bool (*run)(uint64_t);
};

const Kernel kKernels[] = {
    {"avx2", "avx2 fp32 fma", "fp32", 256, 8 * 2, fp32_avx2},
    {"avx512f", "avx512f fp32 fma", "fp32", 512, 16 * 2, fp32_avx512},
    {"avx512bf16", "avx512bf16 dpbf16ps", "bf16", 512, 16 * 4, bf16_avx512},
    {"avx512vnni", "avx512vnni dpbusd", "int8", 512, 16 * 8, int8_avx512},
};

bool supports(const char* isa) {
  const std::string s = isa;
  if (s == "avx2") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (s == "avx512f") return __builtin_cpu_supports("avx512f");
  if (s == "avx512bf16") return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512f");
  if (s == "avx512vnni") return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512f");
  if (s == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (s == "avx512vl") return __builtin_cpu_supports("avx512vl");
  if (s == "amx-bf16") return __builtin_cpu_supports("amx-bf16");
  if (s == "amx-int8") return __builtin_cpu_supports("amx-int8");
  return false;
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// `work` on one thread per CPU in `cpus`, each pinned, started together; each thread's own CPU
// time for it. CPU time, not wall time: on a shared machine other processes take turns on the
// cores, and the peak is what a core does while it runs this thread (the threads, one per core,
// do not compete with each other for FMA pipes).
std::vector<double> run_pinned(const std::vector<int>& cpus, const std::function<bool()>& work, bool& ok) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, all_ok{true};
  std::vector<double> seconds(cpus.size());
  std::vector<std::thread> pool;
  for (size_t i = 0; i < cpus.size(); ++i) {
    pool.emplace_back([&, i] {
      pin_to(cpus[i]);
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      const double t0 = thread_cpu_s();
      if (!work()) all_ok = false;
      seconds[i] = thread_cpu_s() - t0;
    });
  }
  while (ready.load() < int(cpus.size())) std::this_thread::yield();
  go.store(true, std::memory_order_release);
  for (std::thread& t : pool) t.join();
  ok = all_ok;
  return seconds;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// 100 dependent adds per loop trip, 1 cycle each on every x86 core since the P6: cycles / s.
double add_chain_ghz() {
  auto once = [] {
    uint64_t x = 0, trips = 20'000'000;
    const double t0 = thread_cpu_s();
    asm volatile(
        "1:\n\t"
        ".rept 100\n\t"
        "add $1, %0\n\t"
        ".endr\n\t"
        "dec %1\n\t"
        "jnz 1b"
        : "+r"(x), "+r"(trips));
    return 20'000'000 * 100.0 / (thread_cpu_s() - t0) / 1e9;
  };
  std::vector<double> v;
  for (int i = 0; i < 5; ++i) v.push_back(once());
  return median(v);
}

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return line.substr(colon + (colon + 1 < line.size() ? 2 : 1));
  }
  return "";
}

}  // namespace

CpuDescription describe_cpu() {
  CpuDescription d;
  d.name = cpuinfo_field("model name");
  d.family_model = "family " + cpuinfo_field("cpu family") + " model " + cpuinfo_field("model\t");
  for (const char* isa : {"avx2", "avx512f", "avx512bw", "avx512vl", "avx512bf16", "avx512vnni", "amx-bf16", "amx-int8"})
    if (supports(isa)) d.isa.push_back(isa);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) d.cpus.push_back(c);
  d.cpuinfo_mhz = std::atof(cpuinfo_field("cpu MHz").c_str());
  std::thread([&] {
    pin_to(d.cpus.empty() ? 0 : d.cpus.front());
    d.measured_ghz = add_chain_ghz();
  }).join();
  return d;
}

bool has_isa(const CpuDescription& cpu, const std::string& name) {
  return std::find(cpu.isa.begin(), cpu.isa.end(), name) != cpu.isa.end();
}

std::vector<Peak> measure_peaks(const CpuDescription& cpu, int threads, int runs) {
  std::vector<Peak> out;
  threads = std::clamp(threads, 1, std::max(1, int(cpu.cpus.size())));
  for (const Kernel& k : kKernels) {
    if (!supports(k.isa)) continue;
    // Calls per run for about 0.1 s on one thread, from one timed call (which also warms the
    // pipes: AVX-512 units on some Intel parts start at a lower clock).
    bool ok = true;
    const double one = run_pinned({cpu.cpus.front()}, [&] { return k.run(kIters); }, ok)[0];
    const int calls = std::max(1, int(0.1 / one));
    std::vector<int> counts{1};
    if (threads > 1) counts.push_back(threads);
    for (int t : counts) {
      const std::vector<int> use(cpu.cpus.begin(), cpu.cpus.begin() + t);
      std::vector<double> gflops;
      bool all_ok = ok;
      for (int r = 0; r < runs; ++r) {
        bool run_ok = true;
        const std::vector<double> seconds = run_pinned(use, [&] {
          bool good = true;
          for (int c = 0; c < calls; ++c) good = k.run(kIters) && good;
          return good;
        }, run_ok);
        all_ok = all_ok && run_ok;
        double rate = 0;  // each core's rate while it ran, summed
        for (double s : seconds) rate += calls * double(kIters) * kChains * k.flop_per_step / s / 1e9;
        gflops.push_back(rate);
      }
      Peak p{k.name, k.dtype, k.bits, t, median(gflops), 0, all_ok};
      if (cpu.measured_ghz > 0) p.per_core_cycle = p.gflops / t / cpu.measured_ghz;
      out.push_back(p);
    }
  }
  return out;
}

double best_peak(const std::vector<Peak>& peaks, const std::string& dtype, int threads) {
  // ONEDNN_MAX_CPU_ISA=AVX2 (bench/pytorch.sh's FRAMELIFT_BENCH_CPU=avx2: an AVX2-only EPYC on an
  // AVX-512 machine) limits the layers to 256-bit vectors, so their peak is the 256-bit one.
  const char* isa = std::getenv("ONEDNN_MAX_CPU_ISA");
  const int max_bits = isa && std::string(isa) == "AVX2" ? 256 : 512;
  double best = 0;
  for (const Peak& p : peaks)
    if (p.dtype == dtype && p.threads == threads && p.value_ok && p.vector_bits <= max_bits) best = std::max(best, p.gflops);
  return best;
}

}  // namespace framelift::bench
