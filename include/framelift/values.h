#pragma once
// The value syntaxes that framelift's options share, parsed as the library parses them: for
// front ends that check a flag of their own before they build a request, so that "4G" or
// "1h30m" means the same in a GUI, a script and the CLI.
//
// Errors: throw framelift::Error(Usage); the message names the value (and `option`, when given).
// Thread-safety: pure functions.
#include <cstdint>
#include <string>

namespace framelift {

// "512M", "2G", "1.5GiB", "800000" (bytes) -> bytes: the syntax of the stages' max_memory option.
int64_t parse_byte_size(const std::string& text);

// "2h", "90m", "1h30m", "45s", "3600" (seconds) -> seconds: PlanRequest::deadline_s from text.
// The message of a refusal names `option` ("--deadline").
double parse_duration(const std::string& text, const std::string& option);

}  // namespace framelift
