#pragma once
// Quoting for the text the generators emit, so that any path (spaces, quotes, $, globs) survives.
#include <string>
#include <string_view>

namespace framelift::deploy {

// One POSIX shell word: 'it'\''s' style. Plain words ([A-Za-z0-9_./:=@%+,-]) stay unquoted.
std::string shell_quote(std::string_view word);

// A YAML double-quoted scalar (JSON string syntax, which YAML 1.2 reads the same way).
std::string yaml_quote(std::string_view value);

}  // namespace framelift::deploy
