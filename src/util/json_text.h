#pragma once
// JSON as text, for every writer a person or a client reads. nlohmann's dump() throws on a
// string that is not UTF-8 (a file name in another encoding, an FFmpeg message quoting one);
// here each invalid byte becomes U+FFFD, the replacement character, so one odd name never turns
// a listing, a job or a report into an error. docs/server.md states this for the REST API.
#include <string>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace framelift {

inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// JSON as text for the files framelift reads back (job.json, plan.json, journal records): there a
// replaced byte would change what the job means, so text that is not UTF-8 is refused, naming
// `file`. File names never meet this: they go through path_json() (util/json_path.h).
inline std::string json_file_text(const nlohmann::json& value, const std::string& file, int indent = -1) {
  try {
    return value.dump(indent);
  } catch (const nlohmann::json::type_error&) {
    throw Error(ErrorKind::Usage, file + ": cannot be written: the pipeline or an option holds text that is not UTF-8");
  }
}

}  // namespace framelift
