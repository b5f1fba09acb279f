#pragma once
// GMFSS union (98mxr/GMFSS_union) as a native interpolator: GMFlow's flows both ways at half size,
// MetricNet's splatting weights (from the warping error and a forward-backward occlusion check),
// AnimeInterp's feature pyramid of each frame softmax-splatted to time t at three scales, RIFE
// 4.6's IFNet ("union": its frame at t, at half size, as a fifth input), and a GridNet fusing
// them into the full-size frame. Everything but the IFNet and the fusion depends only on the pair:
// it is computed once per pair and kept while the frames repeat (several t between two frames).
//
// The released weights are four state dicts in one folder: flownet.pkl (GMFlow), rife.pkl
// (IFNet), metric.pkl and fusionnet.pkl (REAL-Video-Enhancer ships them so). framelift takes that
// folder (`interpolate:model=DIR`) or one state dict holding all four under the prefixes
// "flownet.", "ifnet.", "metricnet." and "fusionnet." (a .pth or .safetensors; what the folder is
// read as).
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "arch/params.h"
#include "models/frame_interpolator.h"
#include "models/gmflow.h"
#include "weights/state_dict.h"

namespace framelift::models {

struct GmfssShape {
  GmflowShape flow;
  std::array<int64_t, 4> ifnet = {192, 128, 96, 64};  // IFNet's block widths
  int64_t metric = 64;
  std::array<int64_t, 3> features = {32, 64, 96};  // AnimeInterp's feature extractor, per scale
  std::array<int64_t, 3> grid = {32, 64, 96};      // its GridNet's rows

  bool published() const;
  std::string variant() const;  // "union", or "custom widths"
};

// nullopt unless all four networks' prefixes are there; Error(Model) "<source>: GMFSS layout: ..."
// when they are and the shapes do not fit together.
std::optional<GmfssShape> detect_gmfss(const weights::StateDict& dict, const std::string& source);

arch::ArchParams gmfss_arch_params(const GmfssShape& shape);

std::unique_ptr<FrameInterpolator> build_gmfss(const weights::StateDict& dict, const std::string& source);

std::string describe_gmfss(const GmfssShape& shape, const weights::StateDict& dict);

// A folder of the released files as one prefixed state dict; nullopt when dir holds neither
// metric.pkl nor fusionnet.pkl (not a GMFSS folder); Error(Model) naming the file when it holds
// one of the four but not the others.
std::optional<weights::StateDict> gmfss_folder_state_dict(const std::filesystem::path& dir);

}  // namespace framelift::models
