// How close framelift's heavy layers come to the CPU's limit (issue 36 item 1): the FMA peaks of
// fma_peak.cpp, then each native architecture's dominant layers timed through framelift's own
// calls (infer::conv2d with its per-shape layout choice, models::Linear, models::biased_attention),
// in the memory format and precision NativeModel runs them in (activations channels-last, weights
// and activations converted to bf16 when the CPU has AVX512-BF16, as --precision auto does), on
// one intra-op thread (timed on the process's CPU clock, which a busy shared machine does not
// inflate) and on the intra-op threads framelift configures (wall clock). Achieved GFLOP/s = 2 x MACs / median
// time; the fraction is of the peak of the same precision and thread count (fp32 layers of the
// fp32 FMA peak, bf16 layers of the VDPBF16PS peak).
//
//   fma_peak [--runs N] [--json PATH] [--peaks-only] [--only TEXT]   (TEXT: layers whose name has it)
//
// Weights and inputs are random (N(0, 1) scaled to keep activations in range): the kernels'
// speed does not depend on the values, only on shapes, layout and dtype.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fma_peak.h"
#include "infer/conv_layout.h"
#include "infer/threads.h"
#include "infer/winograd_conv.h"
#include "models/token_layers.h"
#include "util/cpu_features.h"

namespace fb = framelift::bench;
namespace fi = framelift::infer;
namespace fm = framelift::models;
namespace fw = framelift::infer::winograd;

namespace {

struct Layer {
  std::string name;   // "Compact 3x3 conv 64->64"
  std::string shape;  // "320x236", "64 windows of 8x8, 6 heads x 30"
  double macs = 0;
  std::function<at::Tensor()> run;
};

struct Timed {
  Layer layer;
  std::string dtype;
  double ms_1t = 0, gflops_1t = 0, of_peak_1t = 0;  // one intra-op thread, on the process's CPU clock
  double ms = 0, gflops = 0, of_peak = 0;           // framelift's threads, wall clock
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double wall_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// This process's CPU time, all its threads: with one intra-op thread an ATen conv runs on the
// calling thread, but a linear's GEMM may still run on the BLAS library's own threads, which only
// the process clock sees. What other processes on a shared machine take is not counted, so the
// figure is FLOP per core-second, comparable with the 1-thread peak (measured the same way).
double process_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Median of `runs` samples on `clock`, each one call or as many calls as make 20 ms (the small
// attention matmuls take well under a millisecond), after two warm-up calls (oneDNN builds its
// primitive and the layout choice measures on the first).
double time_ms(const std::function<at::Tensor()>& f, int runs, double (*now_s)()) {
  f();
  const double t0 = now_s();
  f();
  const double one = std::max(now_s() - t0, 1e-6);
  const int calls = std::max(1, int(0.02 / one));
  std::vector<double> samples;
  for (int r = 0; r < runs; ++r) {
    const double s = now_s();
    for (int c = 0; c < calls; ++c) f();
    samples.push_back((now_s() - s) / calls * 1e3);
  }
  return median(samples);
}

at::Tensor activations(int64_t c, int64_t h, int64_t w, at::ScalarType dtype) {
  // What NativeModel::forward hands the network: input.to(dtype).contiguous(activation_format).
  return at::randn({1, c, h, w}).to(dtype).contiguous(fi::activation_format(c10::kCPU));
}

// A conv as read_conv stores it ([out, in, k, k] contiguous, bias [out]) after NativeModel::to.
Layer conv(const std::string& name, int64_t in, int64_t out, int64_t k, int64_t h, int64_t w, at::ScalarType dtype,
           bool winograd = false) {
  const at::Tensor x = activations(in, h, w, dtype);
  const at::Tensor weight = (at::randn({out, in, k, k}) / std::sqrt(double(in * k * k))).to(dtype);
  const at::Tensor bias = at::zeros({out}).to(dtype);
  const int64_t pad = (k - 1) / 2;
  return {name, std::to_string(w) + "x" + std::to_string(h), double(out * in * k * k) * double(h * w),
          [=] {
            const fi::WinogradScope scope(winograd);
            return fi::conv2d(x, weight, bias, 1, pad);
          }};
}

struct Swin {
  std::string name;
  int64_t dim, heads, window;
};

// One window attention's matmuls on a 64x64 token map (SwinIR's training tile): [windows, ws^2, C]
// tokens, as in_windows hands them to SwinLayer::attention.
std::vector<Layer> swin_layers(const Swin& s, at::ScalarType dtype) {
  const int64_t map = 64, windows = (map / s.window) * (map / s.window), n = s.window * s.window, d = s.dim / s.heads;
  const std::string where = std::to_string(windows) + " windows of " + std::to_string(s.window) + "x" +
                            std::to_string(s.window) + ", " + std::to_string(s.heads) + " heads x " + std::to_string(d);
  const at::Tensor tokens = at::randn({windows, n, s.dim}).to(dtype);
  const fm::Linear qkv{(at::randn({3 * s.dim, s.dim}) / std::sqrt(double(s.dim))).to(dtype), at::zeros({3 * s.dim}).to(dtype)};
  const std::vector<at::Tensor> parts = qkv(tokens).chunk(3, -1);
  const at::Tensor q = parts[0], k = parts[1], v = parts[2];
  const at::Tensor bias = at::zeros({s.heads, n, n}).to(dtype);
  // The views biased_attention multiplies (token_layers.cpp's split_heads): [B, heads, N, d].
  auto split = [=](const at::Tensor& t) { return t.reshape({windows, n, s.heads, d}).permute({0, 2, 1, 3}); };
  const double scale = 1.0 / std::sqrt(double(d));
  const double qk = double(windows * s.heads) * double(n * n * d);
  return {
      {s.name + " qkv linear " + std::to_string(s.dim) + "->" + std::to_string(3 * s.dim), where,
       double(windows * n) * double(s.dim * 3 * s.dim), [=] { return qkv(tokens); }},
      {s.name + " q k^T matmul", where, qk,
       [=] { return at::matmul(split(q) * scale, split(k).transpose(-2, -1)); }},
      {s.name + " attention (2 matmuls + softmax)", where, 2 * qk,
       [=] { return fm::biased_attention(q, k, v, s.heads, bias, at::Tensor()); }},
  };
}

// The 3x3 convs again through Winograd F(4x4, 3x3) (infer/winograd_conv.h), the fp32 path of
// `auto` on a CPU without bf16. GFLOP/s counts the direct convolution's 2 x MACs, so "of peak"
// above 100% is what the 4x fewer multiplications buy.
std::vector<Layer> winograd_layers() {
  const int64_t h = 236, w = 320;
  std::vector<Layer> out;
  out.push_back(conv("Compact 3x3 conv 64->64, Winograd", 64, 64, 3, h, w, at::kFloat, true));
  for (int64_t k = 0; k < 5; ++k)
    out.push_back(conv("RRDB dense conv" + std::to_string(k + 1) + " " + std::to_string(64 + 32 * k) + "->" +
                           std::to_string(k == 4 ? 64 : 32) + ", Winograd",
                       64 + 32 * k, k == 4 ? 64 : 32, 3, h, w, at::kFloat, true));
  out.push_back(conv("SPAN 3x3 conv 48->48, Winograd", 48, 48, 3, h, w, at::kFloat, true));
  return out;
}

std::vector<Layer> layers(at::ScalarType dtype) {
  const int64_t h = 236, w = 320;  // Megamind at 320x236, the clip docs/performance.md runs
  std::vector<Layer> out;
  if (dtype == at::kFloat && fw::vector_width() > 0)
    for (Layer& l : winograd_layers()) out.push_back(std::move(l));
  out.push_back(conv("Compact 3x3 conv 64->64", 64, 64, 3, h, w, dtype));
  for (int64_t k = 0; k < 5; ++k)  // RRDB dense block: conv1..conv5 over 64 + 32 k channels
    out.push_back(conv("RRDB dense conv" + std::to_string(k + 1) + " " + std::to_string(64 + 32 * k) + "->" +
                           std::to_string(k == 4 ? 64 : 32),
                       64 + 32 * k, k == 4 ? 64 : 32, 3, h, w, dtype));
  out.push_back(conv("SPAN 3x3 conv 48->48", 48, 48, 3, h, w, dtype));
  out.push_back(conv("SPAN 1x1 conv_cat 192->48", 192, 48, 1, h, w, dtype));
  for (const Swin& s : {Swin{"SwinIR-M", 180, 6, 8}, Swin{"HAT", 180, 6, 16}, Swin{"SwinIR-light", 60, 6, 8}})
    for (Layer& l : swin_layers(s, dtype)) out.push_back(std::move(l));
  return out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void print_table(const fb::CpuDescription& cpu, const std::vector<fb::Peak>& peaks, const std::vector<Timed>& timed, int threads) {
  std::string isa;
  for (const std::string& f : cpu.isa) isa += (isa.empty() ? "" : " ") + f;
  std::printf("CPU: %s (%s), %zu CPUs in the affinity mask, %d threads used\n", cpu.name.c_str(), cpu.family_model.c_str(),
              cpu.cpus.size(), threads);
  std::printf("ISA: %s\n", isa.c_str());
  std::printf("clock: %.2f GHz measured (dependent adds, 1 thread), %.0f MHz in /proc/cpuinfo\n\n", cpu.measured_ghz,
              cpu.cpuinfo_mhz);
  std::printf("| kernel | bits | threads | GFLOP/s | FLOP/cycle/core | value |\n|---|---|---|---|---|---|\n");
  for (const fb::Peak& p : peaks)
    std::printf("| %s | %d | %d | %s | %s | %s |\n", p.kernel.c_str(), p.vector_bits, p.threads, fixed(p.gflops, 1).c_str(),
                fixed(p.per_core_cycle, 1).c_str(), p.value_ok ? "ok" : "WRONG");
  // The check the brief asks of the kernel: FLOP a cycle a core should be 2 (FMA) x 8 lanes x the
  // FMA pipes for 256-bit pipes (Zen 2-4, most AVX2 cores: 32 with two), or x 16 lanes for
  // 512-bit pipes (Xeons with two AVX-512 FMA units, Zen 5: 64).
  const double fp32_1t = fb::best_peak(peaks, "fp32", 1);
  if (fp32_1t > 0 && cpu.measured_ghz > 0)
    std::printf("\nfp32 check: %.1f GFLOP/s on 1 thread / %.2f GHz = %.1f FLOP a cycle: %s\n", fp32_1t, cpu.measured_ghz,
                fp32_1t / cpu.measured_ghz,
                std::abs(fp32_1t / cpu.measured_ghz / 32 - 1) < 0.1   ? "two 256-bit FMA pipes (or one 512-bit)"
                : std::abs(fp32_1t / cpu.measured_ghz / 64 - 1) < 0.1 ? "two 512-bit FMA pipes"
                : std::abs(fp32_1t / cpu.measured_ghz / 16 - 1) < 0.1 ? "one 256-bit FMA pipe"
                                                                      : "no whole number of FMA pipes: a busy core or a throttled clock");
  if (timed.empty()) return;
  auto percent = [](double f) { return f > 0 ? fixed(100 * f, 1) + "%" : std::string("-"); };
  std::printf("\n1 thread: process CPU-clock median, against the 1-thread peak of the same precision; %d threads: wall-clock\n"
              "median, against the %d-thread peak.\n\n",
              threads, threads);
  std::printf("| layer | shape | dtype | GMAC | 1 thread ms | GFLOP/s | of peak | %d threads ms | GFLOP/s | of peak |\n"
              "|---|---|---|---|---|---|---|---|---|---|\n",
              threads);
  for (const Timed& t : timed)
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", t.layer.name.c_str(), t.layer.shape.c_str(),
                t.dtype.c_str(), fixed(t.layer.macs / 1e9, 3).c_str(), fixed(t.ms_1t, 2).c_str(), fixed(t.gflops_1t, 1).c_str(),
                percent(t.of_peak_1t).c_str(), fixed(t.ms, 2).c_str(), fixed(t.gflops, 1).c_str(), percent(t.of_peak).c_str());
}

nlohmann::json to_json(const fb::CpuDescription& cpu, const std::vector<fb::Peak>& peaks, const std::vector<Timed>& timed, int threads) {
  nlohmann::json j;
  j["cpu"] = {{"name", cpu.name}, {"family_model", cpu.family_model}, {"isa", cpu.isa},
              {"cpus", cpu.cpus.size()}, {"threads", threads}, {"measured_ghz", cpu.measured_ghz},
              {"cpuinfo_mhz", cpu.cpuinfo_mhz}};
  for (const fb::Peak& p : peaks)
    j["peaks"].push_back({{"kernel", p.kernel}, {"dtype", p.dtype}, {"bits", p.vector_bits}, {"threads", p.threads},
                          {"gflops", p.gflops}, {"flop_per_cycle_per_core", p.per_core_cycle}, {"value_ok", p.value_ok}});
  for (const Timed& t : timed)
    j["layers"].push_back({{"layer", t.layer.name}, {"shape", t.layer.shape}, {"dtype", t.dtype}, {"macs", t.layer.macs},
                           {"one_thread", {{"ms", t.ms_1t}, {"gflops", t.gflops_1t}, {"of_peak", t.of_peak_1t}}},
                           {"all_threads", {{"ms", t.ms}, {"gflops", t.gflops}, {"of_peak", t.of_peak}}}});
  return j;
}

int usage(const char* why) {
  std::fprintf(stderr, "fma_peak: %s\nusage: fma_peak [--runs N] [--json PATH] [--peaks-only] [--only TEXT]\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::string json_path;
  bool peaks_only = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
      if (runs < 1) return usage("--runs: expected a count of 1 or more");
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--peaks-only") {
      peaks_only = true;
    } else {
      return usage(("unknown argument " + a).c_str());
    }
  }
  const int threads = fi::configure_cpu_threads(0);  // what framelift runs its layers on
  const fb::CpuDescription cpu = fb::describe_cpu();
  const std::vector<fb::Peak> peaks = fb::measure_peaks(cpu, threads, runs);
  bool wrong = false;
  for (const fb::Peak& p : peaks) wrong = wrong || !p.value_ok;

  std::vector<Timed> timed;
  if (!peaks_only) {
    at::NoGradGuard no_grad;  // as NativeModel::forward runs
    std::vector<std::pair<std::string, at::ScalarType>> dtypes{{"fp32", at::kFloat}};
    // As --precision auto decides (FRAMELIFT_CPU_BF16=0 measures a CPU without bf16 on one with it).
    if (fb::has_isa(cpu, "avx512bf16") && framelift::cpu_bf16_support().fast) dtypes.push_back({"bf16", at::kBFloat16});
    for (const auto& [name, dtype] : dtypes) {
      const double peak_1t = fb::best_peak(peaks, name, 1), peak = fb::best_peak(peaks, name, threads);
      for (Layer& l : layers(dtype)) {
        if (l.name.find(only) == std::string::npos) continue;
        Timed t{std::move(l), name};
        at::set_num_threads(1);
        t.ms_1t = time_ms(t.layer.run, runs, process_cpu_s);
        at::set_num_threads(threads);
        t.ms = time_ms(t.layer.run, runs, wall_s);
        t.gflops_1t = 2 * t.layer.macs / (t.ms_1t / 1e3) / 1e9;
        t.gflops = 2 * t.layer.macs / (t.ms / 1e3) / 1e9;
        t.of_peak_1t = peak_1t > 0 ? t.gflops_1t / peak_1t : 0;
        t.of_peak = peak > 0 ? t.gflops / peak : 0;
        timed.push_back(std::move(t));
      }
    }
  }
  print_table(cpu, peaks, timed, threads);
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << to_json(cpu, peaks, timed, threads).dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "fma_peak: %s: cannot write the JSON\n", json_path.c_str());
      return 1;
    }
  }
  if (wrong) std::fprintf(stderr, "fma_peak: a microkernel's chains did not hold the expected count (see 'value')\n");
  return wrong ? 1 : 0;
}
