#pragma once
// SHA-256 (FIPS 180-4), our own: downloads are checked against catalog hashes, and pulling in
// OpenSSL for one digest is not worth a dependency.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace framelift::net {

// Streaming hasher: update() any number of times, then digest()/hex(). Both read a finished copy
// of the state, so they may be called mid-stream and the hasher stays usable.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  std::array<std::uint8_t, 32> digest() const;
  std::string hex() const;  // 64 lowercase hex digits

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

// Hex digest of a whole file. Throws Error(Input, "<path>: ...") when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace framelift::net
