#pragma once
// Protocol Buffers wire format (https://protobuf.dev/programming-guides/encoding/), the part an
// ONNX file uses: varints, 64/32-bit fixed fields and length-delimited fields. Like ByteReader,
// every length is checked against the bytes left once, here, so a hostile file becomes an Error
// naming it. Groups (wire types 3 and 4) are refused: ONNX never writes them.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "util/error.h"
#include "util/str.h"
#include "weights/byte_reader.h"

namespace framelift::weights::proto {

enum class WireType : uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

struct Field {
  uint32_t number = 0;
  WireType type = WireType::Varint;
  uint64_t varint = 0;                // Varint, Fixed64 and Fixed32 values
  std::span<const uint8_t> bytes;     // Bytes: the payload
};

class WireReader {
 public:
  // `where` names the message being read ("TensorProto 'w'"), for errors.
  WireReader(std::span<const uint8_t> bytes, const std::string& label, std::string_view where)
      : bytes_(bytes), label_(label), where_(where) {}

  bool at_end() const { return pos_ == bytes_.size(); }

  Field next() {
    const size_t start = pos_;
    const uint64_t key = varint("field key");
    Field f;
    if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff) fail(str("invalid field number at offset ", start));
    f.number = static_cast<uint32_t>(key >> 3);
    switch (key & 7) {
      case 0: f.type = WireType::Varint; f.varint = varint("varint field"); break;
      case 1: f.type = WireType::Fixed64; f.varint = load_le<uint64_t>(take(8, "64-bit field").data()); break;
      case 5: f.type = WireType::Fixed32; f.varint = load_le<uint32_t>(take(4, "32-bit field").data()); break;
      case 2: {
        f.type = WireType::Bytes;
        const uint64_t n = varint("length");
        f.bytes = take(n, "length-delimited field");
        break;
      }
      default: fail(str("unsupported wire type ", key & 7, " for field ", f.number, " at offset ", start));
    }
    return f;
  }

  uint64_t varint(std::string_view what) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) fail(str("truncated ", what, " at offset ", pos_));
      const uint8_t b = bytes_[pos_++];
      value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return value;
    }
    fail(str("varint longer than 10 bytes (", what, ") at offset ", pos_));
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(ErrorKind::Model, str(label_, ": ", where_, ": ", problem));
  }

 private:
  std::span<const uint8_t> take(uint64_t n, std::string_view what) {
    if (n > bytes_.size() - pos_)
      fail(str("truncated: ", what, " needs ", n, " bytes at offset ", pos_, ", only ", bytes_.size() - pos_, " left"));
    auto out = bytes_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return out;
  }

  std::span<const uint8_t> bytes_;
  const std::string& label_;
  std::string_view where_;
  size_t pos_ = 0;
};

inline std::string as_string(const Field& f) {
  return std::string(reinterpret_cast<const char*>(f.bytes.data()), f.bytes.size());
}

}  // namespace framelift::weights::proto
