#pragma once
// Whole-file reads for the weight readers: weight files are parsed from memory so that the same
// code serves files, fuzzers and tests. The format is decided from the head of the file first
// (read_file_head), so a file that is no weight file is never read whole.
#include <cstdint>
#include <filesystem>
#include <vector>

namespace framelift::weights {

// Throws Error(Model) naming the file when it is missing or unreadable, Error(Resource) when it is
// larger than this machine's memory.
std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path);

// Up to `max_bytes` from the start of the file, and the file's whole size.
struct FileHead {
  std::vector<uint8_t> bytes;
  uint64_t file_size = 0;
};
FileHead read_file_head(const std::filesystem::path& path, size_t max_bytes);

}  // namespace framelift::weights
