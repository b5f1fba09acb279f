#pragma once
// One entry point for every weight file framelift reads, dispatched on content rather than
// extension: users rename .pth to .pt or .ckpt, and safetensors files have no magic number.
#include <cstdint>
#include <filesystem>
#include <span>

#include "weights/state_dict.h"

namespace framelift::weights {

enum class WeightFormat { PthZip, PthLegacy, Safetensors, Unknown };

WeightFormat detect_weight_format(std::span<const uint8_t> bytes);

// Unwrapped state dict from a .pth/.pt/.ckpt (zip or legacy) or .safetensors file. Throws
// Error(Model) naming the file for unknown formats and every reader error.
StateDict load_weights(const std::filesystem::path& path);

}  // namespace framelift::weights
