#pragma once
// safetensors (https://github.com/huggingface/safetensors): an 8-byte little-endian header length,
// a JSON header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the raw little-endian tensor bytes, offsets relative to the end of the header.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "weights/state_dict.h"

namespace framelift::weights {

// Throws Error(Model) "<file>: ..." for any inconsistency: header length vs file size, malformed
// JSON, unknown dtype, offsets outside the data or not matching shape x dtype size, overlaps.
StateDict load_safetensors(const std::filesystem::path& path);
StateDict load_safetensors_bytes(std::span<const uint8_t> bytes, const std::string& label);

// Writes contiguous copies of the tensors, keys sorted, header padded to 8 bytes like the
// reference implementation. Throws Error(Model) for unsupported dtypes, Error(Output) when the
// file cannot be written.
void save_safetensors(const std::filesystem::path& path, const StateDict& tensors);

// True when `bytes` start like a safetensors file (plausible header length, then '{').
bool looks_like_safetensors(std::span<const uint8_t> bytes);
// The same from the first bytes of a file of `file_size` bytes (9 are enough).
bool looks_like_safetensors(std::span<const uint8_t> head, uint64_t file_size);

}  // namespace framelift::weights
