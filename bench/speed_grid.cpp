// The speed grid (issue 37), dav1d's checkasm --bench in spirit: every network given on the command
// line, at each of its sizes, timed in framelift's default path (what `run` takes: --precision auto
// for the architecture on this CPU, each convolution's layout chosen per layer, infer/conv_layout.h)
// and in framelift's plain NCHW fp32 path (FRAMELIFT_CONV_LAYOUT=nchw, fp32: the libtorch kernels
// eager PyTorch runs by default in NCHW fp32). bench/speed_grid.sh adds eager PyTorch itself
// (bench/pytorch_grid.py) and merges the tables.
//
//   speed_grid [--runs N] [--threads N] [--clock wall|cpu] [--bound R] [--default-layout POLICY] [--json FILE] ENTRY...
//   ENTRY: [KIND:]NAME=FILE@WxH[,WxH...]
//     KIND model (default: a .pth/.safetensors native network or an ncnn .param, as -m opens it),
//          ncnn-graph (an ncnn .param on the graph interpreter, FRAMELIFT_NCNN_GRAPH=1),
//          rife (an interpolator: a RIFE .pth/.pkl or ncnn flownet.param, t = 0.5),
//          synthetic (FILE is ARCH:DIM:BLOCKS:SCALE, ARCH plksr or realplksr: random weights in
//          spandrel's key layout, 17x17 kernels over dim / 4 channels; the published layouts' widths
//          without a checkpoint to commit, for the quick guard)
//
// Each row: one warm-up call per path (the layout choices are measured there, once per shape), then
// N calls of each path alternately, the median of each. --clock cpu times the calling thread's CPU
// time (with --threads 1 it is the whole work, and a loaded machine's preemption does not count):
// what the quick guard (ctest speed_grid_quick) uses. --bound R: exit 1 when any row's default is
// more than R times its NCHW fp32 time. --default-layout channels-last (or large-nchw) gives the
// default path that layout policy instead of auto: the behaviour before per-layer choice, with which
// the guard must fail on a CPU where large kernels fall off a cliff channels-last (tests/CMakeLists.txt
// emulates one with ONEDNN_MAX_CPU_ISA=AVX2). Exit 2 for a bad argument, 3 for a file that does not open.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/declaration.h"
#include "infer/conv_layout.h"
#include "infer/device.h"
#include "infer/threads.h"
#include "infer/tiler.h"
#include "models/architecture_registry.h"
#include "models/frame_interpolator.h"
#include "models/model_files.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace {

using namespace framelift;

struct Entry {
  std::string kind = "model", name, file;
  std::vector<std::pair<int, int>> sizes;  // (w, h)
};

struct Options {
  int runs = 5, threads = 0;
  bool cpu_clock = false;
  double bound = 0;
  infer::ConvLayoutPolicy default_layout = infer::ConvLayoutPolicy::Auto;
  std::string json;
  std::vector<Entry> entries;
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "speed_grid: " << problem << "\n";
  std::exit(2);
}

std::vector<std::pair<int, int>> parse_sizes(const std::string& text, const std::string& entry) {
  std::vector<std::pair<int, int>> sizes;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string one = text.substr(at, comma - at);
    int w = 0, h = 0;
    char x = 0;
    if (std::sscanf(one.c_str(), "%d%c%d", &w, &x, &h) != 3 || x != 'x' || w < 1 || h < 1)
      usage(str(entry, ": size '", one, "' is not WxH"));
    sizes.emplace_back(w, h);
    at = comma + 1;
  }
  return sizes;
}

Entry parse_entry(const std::string& text) {
  Entry e;
  std::string rest = text;
  const size_t eq = rest.find('='), colon = rest.find(':');
  if (colon != std::string::npos && colon < eq) {
    e.kind = rest.substr(0, colon);
    rest = rest.substr(colon + 1);
  }
  if (e.kind != "model" && e.kind != "ncnn-graph" && e.kind != "rife" && e.kind != "synthetic")
    usage(str(text, ": unknown kind '", e.kind, "'"));
  const size_t name_end = rest.find('='), at = rest.rfind('@');
  if (name_end == std::string::npos || at == std::string::npos || at < name_end)
    usage(str(text, ": expected [KIND:]NAME=FILE@WxH[,WxH...]"));
  e.name = rest.substr(0, name_end);
  e.file = rest.substr(name_end + 1, at - name_end - 1);
  e.sizes = parse_sizes(rest.substr(at + 1), text);
  return e;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--runs") o.runs = std::max(1, std::atoi(value().c_str()));
    else if (a == "--threads") o.threads = std::atoi(value().c_str());
    else if (a == "--clock") {
      const std::string c = value();
      if (c != "wall" && c != "cpu") usage("--clock: '" + c + "' is not wall or cpu");
      o.cpu_clock = c == "cpu";
    } else if (a == "--bound") o.bound = std::atof(value().c_str());
    else if (a == "--json") o.json = value();
    else if (a == "--default-layout") {
      const std::string v = value();
      const auto p = infer::parse_conv_layout_policy(v);
      if (!p || *p == infer::ConvLayoutPolicy::Nchw) usage("--default-layout: '" + v + "' is not auto, channels-last or large-nchw");
      o.default_layout = *p;
    }
    else if (a.rfind("--", 0) == 0) usage("unknown option " + a);
    else o.entries.push_back(parse_entry(a));
  }
  if (o.entries.empty()) usage("no networks given (ENTRY: [KIND:]NAME=FILE@WxH[,WxH...])");
  return o;
}

// A PLKSR or RealPLKSR state dict in spandrel's layout ("plksr:64:2:2": dim 64, 2 blocks, x2), with
// seeded weights at fan-in scale; upstream's defaults otherwise (CCM mixer, kernel 17 over dim / 4
// channels, element-wise attention; RealPLKSR's GroupNorm).
weights::StateDict synthetic_dict(const std::string& spec) {
  char arch[16] = {};
  int dim = 0, blocks = 0, scale = 0;
  if (std::sscanf(spec.c_str(), "%15[a-z]:%d:%d:%d", arch, &dim, &blocks, &scale) != 4 || dim < 4 || blocks < 1 || scale < 1 ||
      (std::string(arch) != "plksr" && std::string(arch) != "realplksr"))
    usage(str("synthetic: '", spec, "' is not plksr|realplksr:DIM:BLOCKS:SCALE"));
  const bool real = std::string(arch) == "realplksr";
  at::Generator g = at::detail::createCPUGenerator(3737);
  weights::StateDict d;
  auto conv = [&](const std::string& p, int64_t in, int64_t out, int64_t k) {
    d[p + ".weight"] = at::randn({out, in, k, k}, g).mul_(1.0 / std::sqrt(double(in * k * k)));
    d[p + ".bias"] = at::randn({out}, g).mul_(0.1);
  };
  conv("feats.0", 3, dim, 3);
  for (int i = 1; i <= blocks; ++i) {
    const std::string p = str("feats.", i);
    const std::string mixer = real ? ".channel_mixer." : ".channe_mixer.";  // upstream's spellings
    conv(p + mixer + "0", dim, 2 * dim, 3);
    conv(p + mixer + "2", 2 * dim, dim, real ? 3 : 1);
    conv(p + ".lk.conv", dim / 4, dim / 4, 17);
    conv(p + ".attn.f.0", dim, dim, 3);
    conv(p + ".refine", dim, dim, 1);
    if (!real) continue;
    d[p + ".norm.weight"] = at::ones({dim});
    d[p + ".norm.bias"] = at::zeros({dim});
  }
  // RealPLKSR's feats.{n+1} is a Dropout (no weights); the tail follows it.
  conv(str("feats.", blocks + (real ? 2 : 1)), dim, 3 * scale * scale, 3);
  return d;
}

// One path of one network: runs a forward pass on its prepared input.
struct Path {
  std::function<void()> prepare;  // switches the model's precision and the layout policy to this path
  std::function<void()> call;
  std::string precision;
};

// The network under test behind one interface: an image model or an interpolator.
class Subject {
 public:
  Subject(const Entry& e, int w, int h) {
    if (e.kind == "ncnn-graph") setenv("FRAMELIFT_NCNN_GRAPH", "1", 1);
    if (e.kind == "rife") {
      rife_ = models::open_interpolator(e.file);
      arch_ = "rife";
    } else {
      image_ = e.kind == "synthetic" ? models::build_model(synthetic_dict(e.file), e.file) : models::open_model(e.file);
      arch_ = e.kind == "ncnn-graph" ? "" : image_->info().arch;
      const int m = std::max(1, image_->info().size_multiple);
      // The runner pads to the multiple; the grid times the padded size, as the runner would run.
      w = (w + m - 1) / m * m;
      h = (h + m - 1) / m * m;
      channels_ = image_->info().in_channels;
    }
    if (e.kind == "ncnn-graph") unsetenv("FRAMELIFT_NCNN_GRAPH");
    at::Generator g = at::detail::createCPUGenerator(37);
    a_ = at::rand({1, channels_, h, w}, g);
    b_ = at::rand({1, channels_, h, w}, g);
  }

  // What --precision auto picks for this architecture on this CPU (pipeline/model_run_options.cpp).
  c10::ScalarType default_dtype() const {
    const arch::Declaration* d = arch_.empty() ? nullptr : arch::find_declaration(arch_);
    const infer::ReducedPrecisions reduced{d && d->runs_in(arch::Precision::Bf16), false};
    return infer::resolve_target("cpu", "auto", reduced).dtype;
  }

  Path path(c10::ScalarType dtype, infer::ConvLayoutPolicy policy) {
    Path p;
    p.precision = infer::precision_name(dtype);
    p.prepare = [this, dtype, policy] {
      infer::set_conv_layout_policy(policy);
      if (image_) image_->to(c10::kCPU, dtype);
      else rife_->to(c10::kCPU, dtype);
      x_ = a_.to(dtype);
      y_ = b_.to(dtype);
      if (policy != infer::ConvLayoutPolicy::Nchw) return;
      x_ = x_.contiguous();
      y_ = y_.contiguous();
    };
    p.call = [this] {
      at::InferenceMode guard;
      if (image_) infer::upscale_tiled(*image_, x_, {.tile = 0});
      else rife_->interpolate(x_, y_, 0.5);
    };
    return p;
  }

  // The network that runs: "plksr", "ncnn_graph", "rife" (the architecture, for the table).
  std::string network() const { return image_ ? image_->info().arch : rife_->info().arch; }
  int64_t width() const { return a_.size(3); }
  int64_t height() const { return a_.size(2); }

 private:
  std::unique_ptr<models::ImageModel> image_;
  std::unique_ptr<models::FrameInterpolator> rife_;
  std::string arch_;
  int channels_ = 3;
  at::Tensor a_, b_, x_, y_;
};

double now_ms(bool cpu_clock) {
  if (cpu_clock) {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double timed(const Path& p, bool cpu_clock) {
  p.prepare();
  const double t0 = now_ms(cpu_clock);
  p.call();
  return now_ms(cpu_clock) - t0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Row {
  std::string name, network, size, padded, precision;
  double default_ms = 0, nchw_ms = 0;
  double ratio() const { return default_ms / nchw_ms; }
};

// The two paths alternately, so that a change in the machine's load falls on both.
Row measure(const Entry& e, int w, int h, const Options& o) {
  Subject s(e, w, h);
  Path fast = s.path(s.default_dtype(), o.default_layout);
  Path ref = s.path(c10::kFloat, infer::ConvLayoutPolicy::Nchw);
  timed(fast, o.cpu_clock);  // warm-up: oneDNN's primitives, the layout measurements
  timed(ref, o.cpu_clock);
  std::vector<double> f, r;
  for (int i = 0; i < o.runs; ++i) {
    f.push_back(timed(fast, o.cpu_clock));
    r.push_back(timed(ref, o.cpu_clock));
  }
  infer::set_conv_layout_policy(std::nullopt);
  // The size asked for, as the eager peer's rows name it (upstream pads inside its forward the way
  // framelift's runner pads before it: the same work); the padded one when it differs.
  const std::string padded = s.width() == w && s.height() == h ? "" : str(s.width(), "x", s.height());
  return {e.name, s.network(), str(w, "x", h), padded, fast.precision, median(f), median(r)};
}

std::string cpu_line(const char* key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return line.substr(line.find(':') + 2);
  return "";
}

// The flags that decide oneDNN's kernels and framelift's choices, of all /proc/cpuinfo lists.
std::string isa_flags() {
  const std::string all = " " + cpu_line("flags") + " ";
  std::string out;
  for (const char* f : {"avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_tile"})
    if (all.find(str(" ", f, " ")) != std::string::npos) out += (out.empty() ? "" : " ") + std::string(f);
  return out;
}

void print_row(const Row& r) {
  std::printf("%-34s %-15s %-9s %-5s %12.2f %12.2f %8.2fx\n", r.name.c_str(), r.network.c_str(), r.size.c_str(),
              r.precision.c_str(), r.default_ms,
              r.nchw_ms, r.ratio());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  log::set_level(log::Level::Warn);
  const int threads = infer::configure_cpu_threads(o.threads);
  std::printf("cpu: %s\nflags: %s\nthreads: %d, clock: %s, median of %d runs after one warm-up\n\n",
              cpu_line("model name").c_str(), isa_flags().c_str(), threads, o.cpu_clock ? "thread cpu" : "wall", o.runs);
  std::printf("%-34s %-15s %-9s %-5s %12s %12s %9s\n", "row", "network", "size", "prec", "default ms", "nchw-fp32 ms", "ratio");
  std::vector<Row> rows;
  bool failed = false;
  for (const Entry& e : o.entries) {
    for (const auto& [w, h] : e.sizes) {
      try {
        rows.push_back(measure(e, w, h, o));
      } catch (const Error& err) {  // names the file already
        std::cerr << "speed_grid: " << err.what() << "\n";
        return 3;
      } catch (const std::exception& err) {  // libtorch's, on a network that fails to run
        std::cerr << "speed_grid: " << e.file << ": " << std::string(err.what()).substr(0, std::string(err.what()).find('\n')) << "\n";
        return 3;
      }
      print_row(rows.back());
      if (o.bound > 0 && rows.back().ratio() > o.bound) {
        std::printf("  ^ %s at %s: the default path is %.2fx its plain NCHW fp32 path (bound %.1fx)\n", e.name.c_str(),
                    rows.back().size.c_str(), rows.back().ratio(), o.bound);
        failed = true;
      }
    }
  }
  if (!o.json.empty()) {
    nlohmann::ordered_json j = {{"cpu", cpu_line("model name")}, {"flags", isa_flags()}, {"threads", threads},
                                {"clock", o.cpu_clock ? "cpu" : "wall"}, {"runs", o.runs}};
    for (const Row& r : rows)
      j["rows"].push_back({{"name", r.name}, {"network", r.network}, {"size", r.size}, {"padded", r.padded}, {"precision", r.precision}, {"default_ms", r.default_ms},
                           {"nchw_fp32_ms", r.nchw_ms}});
    std::ofstream(o.json) << j.dump(2) << "\n";
  }
  return failed ? 1 : 0;
}
