#pragma once
// Durations, money and sizes for people: "1h12m", "$0.48", "3.2 GB", "450 MB".
#include <string>

namespace framelift::plan {

std::string human_duration(double seconds);
std::string money(double usd);
std::string gigabytes(double bytes);
// "2h", "90m", "1h30m", "45s", "3600" (seconds) -> seconds; throws Error(Usage) naming `option`.
double parse_duration(const std::string& text, const std::string& option);

}  // namespace framelift::plan
