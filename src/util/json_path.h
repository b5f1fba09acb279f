#pragma once
// File names in the JSON framelift writes and reads back (job.json, a RunSpec handed to Slurm or
// Kubernetes workers). A POSIX name is bytes, a JSON string UTF-8: a name in another encoding
// (Latin-1 "caf\xe9.mkv") made the job file unwritable ("internal error" from nlohmann), and
// replacing its bytes (json_text.h) would send a resume to another file. So a name that is UTF-8
// stays a plain string, as every job file so far has it, and one that is not is stored as
// {"bytes": "<hex>"}, read back to the same bytes.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace framelift {

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
bool is_utf8(std::string_view s);

nlohmann::json path_json(const std::string& path);

// The name `j` holds in either form, or nullopt when it is neither (a damaged file).
std::optional<std::string> path_from_json(const nlohmann::json& j);

}  // namespace framelift
