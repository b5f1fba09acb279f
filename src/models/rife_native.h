#pragma once
// RIFE 4.6 (IFNet, Practical-RIFE's "HDv3" v4.6) as a native network: from a Practical-RIFE
// flownet.pkl state dict (keys with or without the "module." prefix of DataParallel), or from the
// ncnn export of the same network (flownet.param/.bin, as rife-ncnn-vulkan ships it).
//
// Four IFBlocks estimate the flow coarse to fine (at 1/8, 1/4, 1/2, 1/1 of the frame, divided by
// `scale`), each refining the previous flow from the two frames warped by it; a sigmoid mask
// blends the two finally warped frames. Versions are told apart by keys and shapes: 4.7 and later
// add a feature encoder ("encode.*") and are refused with a clear error, as are older layouts.
#include <filesystem>
#include <memory>

#include "models/frame_interpolator.h"
#include "weights/state_dict.h"

namespace framelift::models {

std::unique_ptr<FrameInterpolator> build_rife_native(const weights::StateDict& dict, const std::string& source);
std::unique_ptr<FrameInterpolator> load_rife_native(const std::filesystem::path& file);
// The ncnn export's weights under the native names (for agreement tests and `models info`).
weights::StateDict rife_ncnn_to_native_state_dict(const std::filesystem::path& param, const std::filesystem::path& bin);

}  // namespace framelift::models
