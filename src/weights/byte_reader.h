#pragma once
// Bounds-checked little-endian reads over an in-memory weight file. Every reader here parses
// untrusted bytes, so the bounds are checked once, in this class, rather than at each call site;
// a short read becomes an Error naming the file, never an out-of-bounds access.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "util/error.h"
#include "util/str.h"

namespace framelift::weights {

// Little-endian load of an unsigned integer from at least sizeof(T) readable bytes.
template <class T>
T load_le(const uint8_t* p) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(p[i]) << (8 * i);
  return value;
}

// libtorch's messages carry a backtrace after the first line; our errors are one line.
inline std::string_view first_line(std::string_view text) { return text.substr(0, text.find('\n')); }

class ByteReader {
 public:
  ByteReader(std::span<const uint8_t> bytes, std::string label)
      : bytes_(bytes), label_(std::move(label)) {}

  size_t position() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  bool at_end() const { return pos_ == bytes_.size(); }
  const std::string& label() const { return label_; }

  std::span<const uint8_t> take(uint64_t n, std::string_view what) {
    if (n > remaining())
      fail(str("truncated: ", what, " needs ", n, " bytes at offset ", pos_, ", only ", remaining(),
               " left"));
    auto out = bytes_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return out;
  }
  uint8_t u8(std::string_view what) { return take(1, what)[0]; }
  uint16_t u16(std::string_view what) { return load_le<uint16_t>(take(2, what).data()); }
  uint32_t u32(std::string_view what) { return load_le<uint32_t>(take(4, what).data()); }
  uint64_t u64(std::string_view what) { return load_le<uint64_t>(take(8, what).data()); }

  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(ErrorKind::Model, str(label_, ": ", problem));
  }

 private:
  std::span<const uint8_t> bytes_;
  std::string label_;
  size_t pos_ = 0;
};

}  // namespace framelift::weights
