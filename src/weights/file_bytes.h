#pragma once
// Whole-file reads for the weight readers: weight files are parsed from memory so that the same
// code serves files, fuzzers and tests.
#include <cstdint>
#include <filesystem>
#include <vector>

namespace framelift::weights {

// Throws Error(Model) naming the file when it is missing or unreadable.
std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path);

}  // namespace framelift::weights
