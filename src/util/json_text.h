#pragma once
// JSON as text, for every writer a person or a client reads. nlohmann's dump() throws on a
// string that is not UTF-8 (a file name in another encoding, an FFmpeg message quoting one);
// here each invalid byte becomes U+FFFD, the replacement character, so one odd name never turns
// a listing, a job or a report into an error. docs/server.md states this for the REST API.
#include <string>

#include <nlohmann/json.hpp>

namespace framelift {

inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace framelift
