#include "weights/zip_archive.h"

#include <algorithm>

#include "weights/byte_reader.h"

namespace framelift::weights {
namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64End = 0x06064b50;
constexpr size_t kEndRecordSize = 22;
constexpr size_t kMaxComment = 0xffff;

struct Directory {
  uint64_t count = 0;
  uint64_t size = 0;
  uint64_t offset = 0;
};

size_t find_end_record(std::span<const uint8_t> bytes) {
  if (bytes.size() < kEndRecordSize) return SIZE_MAX;
  const size_t lowest = bytes.size() > kEndRecordSize + kMaxComment
                            ? bytes.size() - kEndRecordSize - kMaxComment
                            : 0;
  for (size_t pos = bytes.size() - kEndRecordSize + 1; pos-- > lowest;)
    if (load_le<uint32_t>(bytes.data() + pos) == kEndOfDirectory) return pos;
  return SIZE_MAX;
}

Directory read_directory(ByteReader& in, std::span<const uint8_t> bytes, size_t end_record) {
  ByteReader end(bytes.subspan(end_record), in.label());
  end.u32("end record signature");
  end.u16("disk number");
  end.u16("directory disk");
  end.u16("entries on disk");
  Directory dir{end.u16("entry count"), end.u32("directory size"), end.u32("directory offset")};
  const bool zip64 = dir.count == 0xffff || dir.size == 0xffffffff || dir.offset == 0xffffffff;
  if (!zip64) return dir;
  // ZIP64: a locator just before the end record points at the 64-bit end record.
  if (end_record < 20) in.fail("zip: ZIP64 locator missing");
  ByteReader locator(bytes.subspan(end_record - 20, 20), in.label());
  if (locator.u32("ZIP64 locator") != kZip64Locator) in.fail("zip: ZIP64 locator missing");
  locator.u32("disk");
  const uint64_t record = locator.u64("ZIP64 end record offset");
  if (record > bytes.size()) in.fail("zip: ZIP64 end record outside the file");
  ByteReader end64(bytes.subspan(static_cast<size_t>(record)), in.label());
  if (end64.u32("ZIP64 end record") != kZip64End) in.fail("zip: bad ZIP64 end record");
  end64.take(20, "ZIP64 end record");  // size, versions, disk numbers
  end64.u64("entries on disk");
  return {end64.u64("entry count"), end64.u64("directory size"), end64.u64("directory offset")};
}

// ZIP64 extra field (id 1): 64-bit values for whichever 32-bit fields were saturated, in order.
void apply_zip64_extra(std::span<const uint8_t> extra, ZipEntry& entry, const std::string& label) {
  ByteReader in(extra, label);
  while (in.remaining() >= 4) {
    const uint16_t id = in.u16("extra id");
    const uint16_t size = in.u16("extra size");
    ByteReader field(in.take(size, "zip extra field"), label);
    if (id != 1) continue;
    if (entry.size == 0xffffffff) entry.size = field.u64("ZIP64 size");
    if (entry.compressed_size == 0xffffffff) entry.compressed_size = field.u64("ZIP64 size");
    if (entry.local_header_offset == 0xffffffff) entry.local_header_offset = field.u64("ZIP64 offset");
  }
}

}  // namespace

bool looks_like_zip(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && (load_le<uint32_t>(bytes.data()) == kLocalHeader ||
                               load_le<uint32_t>(bytes.data()) == kEndOfDirectory);
}

ZipArchive::ZipArchive(std::span<const uint8_t> bytes, std::string label)
    : bytes_(bytes), label_(std::move(label)) {
  ByteReader in(bytes, label_);
  const size_t end_record = find_end_record(bytes);
  if (end_record == SIZE_MAX)
    in.fail("zip: no end-of-central-directory record (truncated or not a zip file)");
  const Directory dir = read_directory(in, bytes, end_record);
  if (dir.offset > bytes.size() || dir.size > bytes.size() - dir.offset)
    in.fail("zip: central directory lies outside the file (truncated?)");
  // Every central header is at least 46 bytes, so a count the directory cannot hold is corrupt;
  // checking it here also bounds the reserve below.
  if (dir.count > dir.size / 46) in.fail("zip: central directory entry count is corrupt");
  ByteReader central(bytes.subspan(static_cast<size_t>(dir.offset), static_cast<size_t>(dir.size)),
                     label_);
  entries_.reserve(static_cast<size_t>(dir.count));
  for (uint64_t i = 0; i < dir.count; ++i) {
    if (central.u32("central directory header") != kCentralHeader)
      in.fail(str("zip: bad central directory header ", i));
    central.take(6, "zip versions and flags");
    ZipEntry entry;
    entry.method = central.u16("compression method");
    central.take(8, "zip time and CRC");
    entry.compressed_size = central.u32("compressed size");
    entry.size = central.u32("size");
    const uint16_t name_length = central.u16("name length");
    const uint16_t extra_length = central.u16("extra length");
    const uint16_t comment_length = central.u16("comment length");
    central.take(8, "zip disk and attributes");
    entry.local_header_offset = central.u32("local header offset");
    auto name = central.take(name_length, "entry name");
    entry.name.assign(reinterpret_cast<const char*>(name.data()), name.size());
    apply_zip64_extra(central.take(extra_length, "extra field"), entry, label_);
    central.take(comment_length, "entry comment");
    entries_.push_back(std::move(entry));
  }
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const ZipEntry& e) { return e.name == name; });
  return it == entries_.end() ? nullptr : &*it;
}

std::span<const uint8_t> ZipArchive::read(const ZipEntry& entry) const {
  ByteReader in(bytes_, label_);
  if (entry.method != 0)
    in.fail(str("zip: entry ", entry.name, " is compressed (method ", entry.method,
                "); torch.save stores entries uncompressed, re-save the checkpoint"));
  if (entry.compressed_size != entry.size) in.fail(str("zip: entry ", entry.name, " has inconsistent sizes"));
  if (entry.local_header_offset > bytes_.size() - std::min<size_t>(bytes_.size(), 30))
    in.fail(str("zip: entry ", entry.name, " starts outside the file"));
  ByteReader local(bytes_.subspan(static_cast<size_t>(entry.local_header_offset)), label_);
  if (local.u32("local header") != kLocalHeader)
    in.fail(str("zip: bad local header for ", entry.name));
  local.take(22, "local header");
  const uint16_t name_length = local.u16("name length");
  const uint16_t extra_length = local.u16("extra length");
  local.take(uint64_t{name_length} + extra_length, "local name and extra");
  if (entry.size > local.remaining())
    in.fail(str("zip: entry ", entry.name, " runs past the end of the file (truncated?)"));
  return local.take(entry.size, entry.name);
}

}  // namespace framelift::weights
