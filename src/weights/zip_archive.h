#pragma once
// A minimal reader for the zip archives torch.save writes (since PyTorch 1.6): entries are stored
// uncompressed, possibly with ZIP64 records. We read the central directory ourselves rather than
// through libarchive so that entries are zero-copy views of the file and every offset is checked
// against the buffer with an error naming the file.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace framelift::weights {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 = stored; anything else is refused when read
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t local_header_offset = 0;
};

class ZipArchive {
 public:
  // Parses the central directory; throws Error(Model) "<label>: ..." if it is missing or corrupt.
  ZipArchive(std::span<const uint8_t> bytes, std::string label);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(std::string_view name) const;
  // The entry's bytes inside the archive buffer (no copy). Throws for compressed or out-of-range
  // entries.
  std::span<const uint8_t> read(const ZipEntry& entry) const;

 private:
  std::span<const uint8_t> bytes_;
  std::string label_;
  std::vector<ZipEntry> entries_;
};

bool looks_like_zip(std::span<const uint8_t> bytes);

}  // namespace framelift::weights
