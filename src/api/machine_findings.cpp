// describe_machine(): what each part of the report means for a framelift user, one line each.
// The numbers in the meanings are the ones docs/precision.md and docs/gpu.md measure.
#include <algorithm>
#include <cstdio>

#include "framelift/machine.h"
#include "util/disk_space.h"
#include "util/str.h"

namespace framelift {
namespace {

using Level = MachineFinding::Level;
using Findings = std::vector<MachineFinding>;

// Names joined by spaces; `none` when there are none.
std::string joined(const std::vector<std::string>& names, const char* none = "none") {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out.empty() ? none : out;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

void add_cpu(const CpuReport& c, Findings& out) {
  out.push_back({"CPU", c.model.empty() ? "unknown model" : c.model,
                 str(c.physical_cores > 0 ? str(c.physical_cores, " cores, ") : std::string(), c.logical_cpus,
                     " threads; framelift runs ", c.usable_threads, " (affinity and cgroup quota)"),
                 Level::Ok});
  std::vector<std::string> have, lack;
  bool avx2 = false, avx512 = false;
  for (const auto& [name, present] : c.flags) {
    (present ? have : lack).push_back(name);
    avx2 = avx2 || (present && name == "avx2");
    avx512 = avx512 || (present && name == "avx512f");
  }
  std::string value = joined(have);
  if (!lack.empty()) value += " (no " + joined(lack) + ")";
  if (avx512) out.push_back({"CPU features", value, "AVX-512: oneDNN's widest fp32 kernels", Level::Ok});
  else if (avx2) out.push_back({"CPU features", value, "AVX2/FMA: oneDNN's fast fp32 kernels", Level::Ok});
  else out.push_back({"CPU features", value, "no AVX2: CPU inference runs far slower than on a recent CPU", Level::Warning});
}

void add_precision(const CpuReport& c, Findings& out) {
  const std::string value = str(c.auto_precision, " (", c.auto_precision_why, ")");
  const std::string winograd = c.auto_winograd ? "; 3x3 convolutions by Winograd F(4x4,3x3), ~2x the direct fp32 path" : "";
  std::string meaning;
  if (c.auto_precision_why.rfind("FRAMELIFT_CPU_BF16=", 0) == 0) meaning = "forced by FRAMELIFT_CPU_BF16 (unset it for the detected choice)" + winograd;
  else if (c.auto_precision == "bf16" && c.amx) meaning = "~6x fp32 on this CPU (AMX tiles); --precision fp32 for the exact reference";
  else if (c.auto_precision == "bf16") meaning = "~2x fp32 on this CPU; --precision fp32 for the exact reference";
  else meaning = "bf16 would be emulated here and slower than fp32" + winograd;
  out.push_back({"precision auto", value, meaning, Level::Ok});
}

void add_memory(const MemoryReport& m, Findings& out) {
  if (m.total_bytes < 0 || m.available_bytes < 0) {
    out.push_back({"memory", "unknown (/proc/meminfo unreadable)", "tiles are sized without a memory limit", Level::Warning});
    return;
  }
  const std::string value = str(human_bytes(double(m.available_bytes)), " available of ", human_bytes(double(m.total_bytes)));
  if (m.available_bytes < 2LL * 1000 * 1000 * 1000)
    out.push_back({"memory", value, "little free memory: tiles shrink and large models may not fit", Level::Warning});
  else
    out.push_back({"memory", value, "tiles are sized to what is free; --max-memory caps a run", Level::Ok});
}

void add_gpu(const GpuReport& g, Findings& out) {
  for (const auto& d : g.devices)
    out.push_back({str("GPU ", d.index), str(d.name.empty() ? "unnamed CUDA device" : d.name, d.total_bytes > 0 ? ", " + human_bytes(double(d.total_bytes)) : ""),
                   str("--device auto runs on ", g.auto_device, g.cuda_runtime.empty() ? "" : " (CUDA " + g.cuda_runtime + ")"), Level::Ok});
  if (g.devices.empty()) {
    const bool driver = !g.nvidia_driver.empty();
    if (!g.libtorch_cuda)
      out.push_back({"GPU", "none (this libtorch is CPU-only)",
                     driver ? "an NVIDIA driver is loaded: a CUDA libtorch build would use it (docs/gpu.md)"
                            : "runs use the CPU; `framelift plan` prices rented GPUs",
                     driver ? Level::Warning : Level::Ok});
    else
      out.push_back({"GPU", "none visible to CUDA",
                     driver ? "the driver is loaded but CUDA sees no device: check CUDA_VISIBLE_DEVICES and the driver's version"
                            : "runs use the CPU; `framelift plan` prices rented GPUs",
                     driver ? Level::Warning : Level::Ok});
  }
  out.push_back({"NVIDIA driver", g.nvidia_driver.empty() ? "not loaded" : g.nvidia_driver,
                 g.nvidia_driver.empty() ? "no NVIDIA GPU can be used here (CUDA and NVENC need the driver)"
                                         : "what CUDA and NVENC run on",
                 Level::Ok});
}

void add_ffmpeg(const FfmpegReport& f, bool nvidia_driver, Findings& out) {
  out.push_back({"FFmpeg", str(f.version, " (libavcodec ", f.libavcodec, ", libavformat ", f.libavformat, ", libavfilter ", f.libavfilter, ")"),
                 "what framelift decodes, filters and encodes with", Level::Ok});
  std::vector<std::string> soft, soft_missing, hard;
  bool nvenc = false;
  for (const auto& e : f.encoders) {
    if (!e.hardware) (e.compiled_in ? soft : soft_missing).push_back(e.name);
    else if (e.compiled_in) hard.push_back(e.name);
    nvenc = nvenc || (e.compiled_in && e.name.find("nvenc") != std::string::npos);
  }
  const bool x264 = std::find(soft.begin(), soft.end(), "libx264") != soft.end();
  out.push_back({"encoders", joined(soft) + (soft_missing.empty() ? "" : " (no " + joined(soft_missing) + ")"),
                 x264 ? (soft_missing.empty() ? "every codec framelift's docs name can be written" : "-c with a missing one fails; the rest work")
                      : "no libx264, the default -c: pass -c with one listed here",
                 x264 ? Level::Ok : Level::Warning});
  std::string meaning;
  if (hard.empty()) meaning = "none compiled in: encoding runs on the CPU";
  else if (nvenc && nvidia_driver) meaning = "-c h264_nvenc (or hevc/av1) moves encoding to the GPU";
  else if (nvenc) meaning = "compiled in, but NVENC needs an NVIDIA GPU and driver (none here)";
  else meaning = "compiled in; VA-API and Quick Sync need their GPU and drivers at run time";
  out.push_back({"hardware encoders", joined(hard), meaning, Level::Ok});
}

void add_folders(const MachineReport& r, Findings& out) {
  const FolderReport& o = r.output;
  if (!o.problem.empty()) out.push_back({"output folder", o.problem, "a run writing there fails (exit 4)", Level::Problem});
  else
    out.push_back({"output folder", str(o.path, ": ", o.free_bytes < 0 ? std::string("free space unknown") : human_bytes(double(o.free_bytes)) + " free", ", writable"),
                   "room for output and job segments", Level::Ok});
  const ModelCacheReport& m = r.models;
  const std::string free = m.folder.free_bytes < 0 ? "free space unknown" : human_bytes(double(m.folder.free_bytes)) + " free";
  const std::string value = str(m.folder.path, ": ", m.installed, m.installed == 1 ? " model, " : " models, ", human_bytes(double(m.bytes)), "; ", free,
                                m.folder.writable ? "" : ", not writable");
  if (!m.folder.writable)
    out.push_back({"model cache", value, "installs fail there: set FRAMELIFT_MODELS to a writable folder", Level::Warning});
  else if (m.installed == 0)
    out.push_back({"model cache", value, "no models installed: `framelift models install NAME` (models list shows them)", Level::Note});
  else
    out.push_back({"model cache", value, "-m NAME runs these without a download", Level::Ok});
}

void add_downloads(const DownloadReport& d, Findings& out) {
  if (!d.catalog_error.empty()) {
    out.push_back({"model downloads", "catalog unreadable", d.catalog_error, Level::Warning});
    return;
  }
  if (d.offline) {
    out.push_back({"model downloads", "not checked (offline)", str(d.hosts.size(), " hosts in ", d.catalog, "; no request was sent"), Level::Note});
    return;
  }
  for (const auto& h : d.hosts) {
    const std::string what = "download " + h.host;
    if (h.reachable)
      out.push_back({what, str("reachable (HTTP ", h.status, ", ", seconds_text(h.seconds), ")"),
                     str("`models install` can fetch the ", h.models, " catalog model", h.models == 1 ? "" : "s", " hosted there"), Level::Ok});
    else
      out.push_back({what, str("unreachable (", h.error, ")"),
                     str("`models install` of its ", h.models, h.models == 1 ? " model fails here: import it" : " models fails here: import them",
                         " from tarballs (`models import`)"),
                     Level::Warning});
  }
}

}  // namespace

std::vector<MachineFinding> describe_machine(const MachineReport& r) {
  Findings out;
  add_cpu(r.cpu, out);
  add_precision(r.cpu, out);
  add_memory(r.memory, out);
  add_gpu(r.gpu, out);
  add_ffmpeg(r.ffmpeg, !r.gpu.nvidia_driver.empty(), out);
  add_folders(r, out);
  add_downloads(r.downloads, out);
  return out;
}

}  // namespace framelift
