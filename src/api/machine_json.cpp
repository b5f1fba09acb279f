// machine_report_json(): the typed report, field for field, for scripts (`framelift doctor --json`).
#include <nlohmann/json.hpp>

#include "framelift/machine.h"

namespace framelift {
namespace {

using json = nlohmann::ordered_json;

json folder_json(const FolderReport& f) {
  return {{"path", f.path}, {"exists", f.exists}, {"writable", f.writable}, {"free_bytes", f.free_bytes}, {"problem", f.problem}};
}

json cpu_json(const CpuReport& c) {
  json flags = json::object();
  for (const auto& [name, present] : c.flags) flags[name] = present;
  return {{"model", c.model},
          {"logical_cpus", c.logical_cpus},
          {"physical_cores", c.physical_cores},
          {"usable_threads", c.usable_threads},
          {"flags", flags},
          {"auto_precision", c.auto_precision},
          {"auto_precision_why", c.auto_precision_why},
          {"amx", c.amx},
          {"auto_winograd", c.auto_winograd}};
}

json gpu_json(const GpuReport& g) {
  json devices = json::array();
  for (const auto& d : g.devices) devices.push_back({{"index", d.index}, {"name", d.name}, {"total_bytes", d.total_bytes}});
  return {{"libtorch_cuda", g.libtorch_cuda}, {"devices", devices}, {"nvidia_driver", g.nvidia_driver},
          {"cuda_runtime", g.cuda_runtime},   {"auto_device", g.auto_device}};
}

json ffmpeg_json(const FfmpegReport& f) {
  json encoders = json::array();
  for (const auto& e : f.encoders) encoders.push_back({{"name", e.name}, {"hardware", e.hardware}, {"compiled_in", e.compiled_in}});
  return {{"version", f.version},         {"libavcodec", f.libavcodec}, {"libavformat", f.libavformat},
          {"libavutil", f.libavutil},     {"libavfilter", f.libavfilter}, {"libswscale", f.libswscale},
          {"encoders", encoders}};
}

json downloads_json(const DownloadReport& d) {
  json hosts = json::array();
  for (const auto& h : d.hosts)
    hosts.push_back({{"host", h.host}, {"models", h.models}, {"checked", h.checked}, {"reachable", h.reachable},
                     {"status", h.status}, {"error", h.error}, {"seconds", h.seconds}});
  return {{"catalog", d.catalog}, {"catalog_error", d.catalog_error}, {"offline", d.offline}, {"hosts", hosts}};
}

}  // namespace

std::string machine_report_json(const MachineReport& r) {
  const json j = {{"cpu", cpu_json(r.cpu)},
                  {"memory", {{"total_bytes", r.memory.total_bytes}, {"available_bytes", r.memory.available_bytes}}},
                  {"gpu", gpu_json(r.gpu)},
                  {"ffmpeg", ffmpeg_json(r.ffmpeg)},
                  {"output", folder_json(r.output)},
                  {"models", {{"folder", folder_json(r.models.folder)}, {"installed", r.models.installed}, {"bytes", r.models.bytes}}},
                  {"downloads", downloads_json(r.downloads)}};
  return j.dump(2);
}

}  // namespace framelift
