#pragma once
// What this machine offers framelift, as `framelift doctor` shows it: the CPU and the precision
// `--precision auto` picks on it, memory, GPUs and driver, the FFmpeg encoders compiled in, free
// disk where the output goes and where the models live, the model cache, and whether the hosts
// the catalog downloads models from answer. Each part is typed; describe_machine() adds what it
// means for a user in one line each (the CLI's screen), machine_report_json() the same as JSON.
//
// Usage:
//
//   framelift::MachineReport r = framelift::machine_report({.output_dir = "/data/out"});
//   if (!r.output.problem.empty()) std::fprintf(stderr, "%s\n", r.output.problem.c_str());
//   for (const auto& line : framelift::describe_machine(r)) ...
//
// Errors: machine_report() throws nothing for what the machine lacks (no GPU, no catalog, an
// unreachable host, an unwritable folder): each is a field of the report. It throws
// framelift::Error(Usage) only for a timeout that is not positive.
// Thread-safety: machine_report() may run from several threads at once; it only reads the system
// (the output folder's write check creates and removes a hidden file of its own). It sends one
// HEAD request per download host, all at once, unless `offline`.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace framelift {

struct MachineReportOptions {
  // The folder whose free space and writability are checked; "" (the default): the current folder,
  // reported by its absolute path.
  std::string output_dir;
  bool offline = false;          // true: no network request; reachability says it was skipped
  double timeout_s = 3;          // limit for each host's HEAD request, connecting included
};

struct CpuReport {
  std::string model;             // /proc/cpuinfo "model name" ("" when it has none)
  int logical_cpus = 0;          // "processor" entries in /proc/cpuinfo
  int physical_cores = 0;        // distinct (physical id, core id) pairs; 0 when not listed
  int usable_threads = 0;        // what framelift's libtorch threads are sized to (affinity, cgroup quota)
  // The vector features that change framelift's speed: name ("avx2", "fma", "avx512f",
  // "avx512_bf16", "amx_bf16", "avx512_vnni") and whether /proc/cpuinfo lists it.
  std::vector<std::pair<std::string, bool>> flags;
  std::string auto_precision;    // what `--precision auto` runs a model in on the CPU: "bf16" or "fp32"
  std::string auto_precision_why;  // "AMX-BF16", "AVX512-BF16", "no AMX-BF16 or AVX512-BF16", "FRAMELIFT_CPU_BF16=0"
  bool amx = false;              // AMX-BF16 tiles (bf16 about 6x fp32 rather than 2x)
  // auto's fp32 runs 3x3 convolutions by Winograd here (no bf16, an AVX2 or AVX-512 kernel, not
  // turned off by FRAMELIFT_CONV_ALGO=direct): the decision runs make, not a guess from `flags`.
  bool auto_winograd = false;
};

struct MemoryReport {
  int64_t total_bytes = -1;      // /proc/meminfo MemTotal; -1 when unreadable
  int64_t available_bytes = -1;  // /proc/meminfo MemAvailable
};

struct GpuDevice {
  int index = 0;
  std::string name;              // "NVIDIA H100 80GB HBM3"
  int64_t total_bytes = 0;       // 0 when unknown
};

struct GpuReport {
  bool libtorch_cuda = false;    // this framelift's libtorch was built with CUDA
  std::vector<GpuDevice> devices;  // the CUDA devices libtorch sees (none on a CPU-only build)
  std::string nvidia_driver;     // from /proc/driver/nvidia/version ("" when that file is absent)
  std::string cuda_runtime;      // "12.4" when libtorch sees a GPU, else ""
  std::string auto_device;       // what `--device auto` picks: "cpu" or "cuda:0"
};

struct EncoderReport {
  std::string name;              // "libx264", "h264_nvenc", ...
  bool hardware = false;         // NVENC, VA-API or Quick Sync
  bool compiled_in = false;      // the linked libavcodec has it (whether its device is there is another matter)
};

struct FfmpegReport {
  std::string version;           // av_version_info(): "5.1.6-0+deb12u1"
  std::string libavcodec, libavformat, libavutil, libavfilter, libswscale;  // "59.37.100"
  std::vector<EncoderReport> encoders;  // the software encoders framelift defaults to, then the hardware ones
};

struct FolderReport {
  std::string path;              // as asked (output_dir, the model cache's folder); absolute for the default
  bool exists = false;
  bool writable = false;         // a file could be created there (and was removed again)
  int64_t free_bytes = -1;       // for an unprivileged process; -1 when it cannot be asked
  // Empty when the folder is fine for output; else one line naming the folder and the problem:
  // "/out: not writable (Read-only file system)", "/out: 12.0 MB free, under the 64 MB ...".
  // Set for the output folder only.
  std::string problem;
};

struct ModelCacheReport {
  FolderReport folder;           // $FRAMELIFT_MODELS, else $XDG_DATA_HOME/framelift/models, ...
  int installed = 0;             // models `framelift models list --installed` lists
  int64_t bytes = 0;             // their files' sizes, from their manifests
};

struct HostReport {
  std::string host;              // "https://github.com", as scheme://host[:port]
  int models = 0;                // catalog models with an upstream download there
  bool checked = false;          // false when offline
  bool reachable = false;        // an HTTP answer came (any status)
  long status = 0;               // that answer's status; 0 when none
  std::string error;             // why none came ("Connection refused", "Timeout was reached")
  double seconds = 0;            // how long the request took
};

struct DownloadReport {
  std::string catalog;           // the catalog file the hosts come from
  std::string catalog_error;     // why it could not be read ("" when it was)
  bool offline = false;
  std::vector<HostReport> hosts; // sorted by how many models each serves, most first
};

// Below this much free space the output folder is a problem (a few minutes of lossless 1080p
// segments): what `framelift doctor` exits 4 for.
inline constexpr int64_t kMinOutputFreeBytes = 64LL * 1000 * 1000;

struct MachineReport {
  CpuReport cpu;
  MemoryReport memory;
  GpuReport gpu;
  FfmpegReport ffmpeg;
  FolderReport output;           // options.output_dir
  ModelCacheReport models;
  DownloadReport downloads;
};

MachineReport machine_report(const MachineReportOptions& options = {});

// One line of `framelift doctor`: "what: value — meaning".
struct MachineFinding {
  enum class Level { Ok, Note, Warning, Problem };
  std::string what;     // "CPU", "precision auto", "GPU", "NVENC", "output folder", ...
  std::string value;    // "bf16 (AVX512-BF16)"
  std::string meaning;  // "~2x fp32 on this CPU"
  Level level = Level::Ok;  // Warning: worth acting on; Problem: runs writing there would fail
};

// The report as a screen of findings (at most about 20), in a fixed order.
std::vector<MachineFinding> describe_machine(const MachineReport& report);

// The report as one JSON object, indented by 2, no final newline: every field above under the
// same names ("cpu", "memory", "gpu", "ffmpeg", "output", "models", "downloads").
std::string machine_report_json(const MachineReport& report);

}  // namespace framelift
