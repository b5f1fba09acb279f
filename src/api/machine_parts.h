#pragma once
// The parts of machine_report() (framelift/machine.h), one file each: what it reads and from where.
#include <string>

#include "framelift/machine.h"

namespace framelift::api {

CpuReport read_cpu();                // /proc/cpuinfo, the bf16 rule of util/cpu_features.h
MemoryReport read_memory();          // /proc/meminfo
GpuReport read_gpu();                // libtorch's CUDA devices, /proc/driver/nvidia/version
FfmpegReport read_ffmpeg();          // the linked libav* libraries
// free space and writability; `output`: also judge it as an output folder (FolderReport::problem)
FolderReport check_folder(const std::string& path, bool output);
ModelCacheReport read_model_cache();  // the library's own model cache
DownloadReport check_downloads(bool offline, double timeout_s);  // the catalog's upstream hosts

}  // namespace framelift::api
