#pragma once
// RIFE (IFNet, Practical-RIFE's "HDv3") as a native network: 4.6, and 4.22 to 4.26 with their
// lite and heavy variants, from a Practical-RIFE flownet.pkl state dict (keys with or without the
// "module." prefix of DataParallel); 4.6 also from its ncnn export (flownet.param/.bin, as
// rife-ncnn-vulkan ships it).
//
// Four or five IFBlocks estimate the flow coarse to fine (4.6: at 1/8 .. 1/1 of the frame, 4.25:
// 1/16 .. 1/1, divided by `scale`), each refining the previous flow from the two frames warped by
// it; a sigmoid mask blends the two finally warped frames. 4.7 and later add a feature encoder
// ("encode.*") whose features are warped with the frames, and blocks that hand features on; the
// version (block scales, padding multiple) is read off the shapes (rife_versions.h). 4.7 to 4.21,
// whose blocks differ again, and older layouts are refused with a clear error.
#include <filesystem>
#include <memory>

#include "arch/params.h"
#include "models/frame_interpolator.h"
#include "weights/state_dict.h"

namespace framelift::models {

// The planner's view of a flownet state dict (arch/rife.cpp's walk): {"features": 0} for 4.6, or
// the encoder's features, "hidden" width, "blocks" and "width0".. of a 4.22+ network. Throws
// Error(Model) where build_rife_native would.
arch::ArchParams rife_arch_params(const weights::StateDict& dict, const std::string& source);

std::unique_ptr<FrameInterpolator> build_rife_native(const weights::StateDict& dict, const std::string& source);
std::unique_ptr<FrameInterpolator> load_rife_native(const std::filesystem::path& file);
// The ncnn export's weights under the native names (for agreement tests and `models info`).
weights::StateDict rife_ncnn_to_native_state_dict(const std::filesystem::path& param, const std::filesystem::path& bin);

}  // namespace framelift::models
