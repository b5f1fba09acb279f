#include "util/json_path.h"

#include <cstdint>

namespace framelift {

bool is_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<uint8_t>(s[i]);
    int extra = 0;
    uint32_t cp = 0;
    if (c < 0x80) extra = 0, cp = c;
    else if (c >= 0xC2 && c <= 0xDF) extra = 1, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) extra = 2, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) extra = 3, cp = c & 0x07;
    else return false;
    if (i + size_t(extra) >= s.size()) return false;  // cut short
    for (int k = 1; k <= extra; ++k) {
      const auto cc = static_cast<uint8_t>(s[i + size_t(k)]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((extra == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
      return false;
    i += size_t(extra) + 1;
  }
  return true;
}

nlohmann::json path_json(const std::string& path) {
  if (is_utf8(path)) return path;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(path.size() * 2);
  for (const char ch : path) {
    const auto b = static_cast<uint8_t>(ch);
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return {{"bytes", hex}};
}

std::optional<std::string> path_from_json(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (!j.is_object() || !j.contains("bytes") || !j["bytes"].is_string()) return std::nullopt;
  const std::string& hex = j["bytes"].get_ref<const std::string&>();
  if (hex.size() % 2) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

}  // namespace framelift
