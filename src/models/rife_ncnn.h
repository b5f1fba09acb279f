#pragma once
// RIFE 4.x through its ncnn graph (the flownet.param/.bin that rife-ncnn-vulkan ships), run by
// the graph interpreter with the custom rife.Warp layer.
#include <filesystem>
#include <memory>

#include "models/frame_interpolator.h"

namespace framelift::models {

std::unique_ptr<FrameInterpolator> load_rife_ncnn(const std::filesystem::path& param, const std::filesystem::path& bin);

// Registers rife.Warp with the ncnn layer registry (idempotent); load_rife_ncnn calls it.
void register_rife_ncnn_layers();

}  // namespace framelift::models
