#include "deploy/quote.h"

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/str.h"

namespace framelift::deploy {

std::string shell_quote(std::string_view word) {
  auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_./:=@%+,-").find(c) != std::string_view::npos;
  };
  bool all_plain = !word.empty();
  for (char c : word) all_plain = all_plain && plain(c);
  if (all_plain) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string yaml_quote(std::string_view value) {
  try {
    // ensure_ascii: \u escapes read the same in every YAML reader, raw UTF-8 may not.
    return nlohmann::json(std::string(value)).dump(-1, ' ', true);
  } catch (const nlohmann::json::exception&) {
    throw Error(ErrorKind::Usage, str("'", value, "': not valid UTF-8, cannot be written to YAML"));
  }
}

}  // namespace framelift::deploy
