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
// From the first kWeightHeadBytes of a file of `file_size` bytes.
constexpr size_t kWeightHeadBytes = 16;
WeightFormat detect_weight_format(std::span<const uint8_t> head, uint64_t file_size);

// Unwrapped state dict from a .pth/.pt/.ckpt (zip or legacy) or .safetensors file. Throws
// Error(Model) naming the file for unknown formats and every reader error.
StateDict load_weights(const std::filesystem::path& path);

}  // namespace framelift::weights
