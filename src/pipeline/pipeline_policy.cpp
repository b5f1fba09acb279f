#include "pipeline/pipeline_policy.h"

#include <algorithm>
#include <cstdlib>

#include "media/filter_policy.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace fs = std::filesystem;
namespace {

// Whether `path`, with every symlink and `..` resolved, lies inside one of `roots`. A path that
// does not exist (yet) is resolved as far as it does.
bool inside_roots(const std::string& value, const std::vector<fs::path>& roots) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(value, ec), ec);
  if (ec || real.empty()) return false;
  for (const fs::path& root : roots) {
    const fs::path base = fs::canonical(root, ec);
    if (!ec && path_within(real, base)) return true;
  }
  return false;
}

// A model value the stage resolves by name (catalog, model cache, model path), not as a file: no
// folder separator and no file of that name where the stage would look first (models/model_files.h).
bool model_name(const std::string& value) {
  if (value.empty() || value == "." || value == ".." || value.find_first_of("/\\") != std::string::npos) return false;
  std::error_code ec;
  return !fs::exists(value, ec);
}

void refuse(const std::string& stage, const std::string& why) { throw Error(ErrorKind::Usage, str("stage ", stage, ": ", why)); }

// A number option over its bound; values that do not parse are the schema's to refuse.
void check_bound(const std::string& stage, const std::string& key, const std::string& value, int bound, const char* what) {
  if (bound <= 0) return;
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (end != value.c_str() && *end == '\0' && v > bound)
    refuse(stage, str(key, "=", value, " is over the limit here, ", bound, " ", what));
}

void check_option(const std::string& stage, const OptionSpec& o, const std::string& value, const Policy& p) {
  if (value.empty()) return;  // unset: the stage's default, or its own "give X=" error
  switch (o.role) {
    case OptionRole::Plain: return;
    case OptionRole::FilterGraph: return media::check_filter_graph(value, p.filters, str("stage ", stage));
    case OptionRole::ModelRef:
      if (model_name(value)) return;
      [[fallthrough]];
    case OptionRole::File:
      if (!inside_roots(value, p.file_roots))
        refuse(stage, str(o.name, "= names a file outside the folders allowed here"));
      return;
    case OptionRole::Device:
      if (std::find(p.devices.begin(), p.devices.end(), value) == p.devices.end())
        refuse(stage, p.devices.empty() ? str(o.name, "= cannot be set here (the device is chosen for you)")
                                        : str(o.name, "=", value, " is not one of the devices allowed here"));
      return;
    case OptionRole::FrameSize: return check_bound(stage, o.name, value, p.max_frame_size, "pixels");
    case OptionRole::Tile: return check_bound(stage, o.name, value, p.max_tile, "pixels");
    case OptionRole::Batch: return check_bound(stage, o.name, value, p.max_batch, "per call");
  }
}

}  // namespace

void check_frame_pixels(const std::string& stage, int width, int height, int64_t max_pixels) {
  if (max_pixels > 0 && int64_t(width) * height > max_pixels)
    throw Error(ErrorKind::Usage, str("stage ", stage, " makes ", width, "x", height, " frames; the limit here is ", max_pixels,
                                      " pixels a frame"));
}

void check_policy(const std::vector<StageSpec>& stages, const Policy& policy) {
  for (const StageSpec& spec : stages) {
    const StageInfo* info = find_stage(spec.name);
    if (!info) continue;
    for (const auto& [key, value] : spec.options.values())
      if (const OptionSpec* o = find_option(info->options, key)) check_option(spec.name, *o, value, policy);
  }
}

}  // namespace framelift::pipeline
