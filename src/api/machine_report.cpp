#include <cmath>
#include <filesystem>

#include "api/machine_parts.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift {

MachineReport machine_report(const MachineReportOptions& options) {
  if (!(options.timeout_s > 0) || !std::isfinite(options.timeout_s))
    throw Error(ErrorKind::Usage, str("timeout: expected seconds > 0, got ", options.timeout_s));
  MachineReport r;
  r.cpu = api::read_cpu();
  r.memory = api::read_memory();
  r.gpu = api::read_gpu();
  r.ffmpeg = api::read_ffmpeg();
  r.output = api::check_folder(options.output_dir.empty() ? std::filesystem::current_path().string() : options.output_dir, true);
  r.models = api::read_model_cache();
  r.downloads = api::check_downloads(options.offline, options.timeout_s);
  return r;
}

}  // namespace framelift
