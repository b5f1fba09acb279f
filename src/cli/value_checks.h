#pragma once
// CLI11 validators that say, in one line, what an option allows: "--frames: 0 is not allowed (a
// whole number >= 1)". A value given on the command line is checked where it is parsed, before
// any work, and a default (an option not given) is never checked.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace framelift::cli {

// A whole number >= `min`.
inline CLI::Validator whole_at_least(int64_t min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        size_t end = 0;
        long long v = 0;
        try {
          v = std::stoll(text, &end);
        } catch (const std::exception&) {
          end = 0;
        }
        if (end == 0 || end != text.size() || v < min)
          return text + " is not allowed (a whole number >= " + std::to_string(min) + ")";
        return "";
      },
      "N>=" + std::to_string(min));
}

// A finite number in (0, max].
inline CLI::Validator positive_up_to(double max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        size_t end = 0;
        double v = 0;
        try {
          v = std::stod(text, &end);
        } catch (const std::exception&) {
          end = 0;
        }
        if (end == 0 || end != text.size() || !std::isfinite(v) || !(v > 0) || v > max) {
          std::string m = std::to_string(max);
          m.erase(m.find_last_not_of('0') + 1);
          if (!m.empty() && m.back() == '.') m.pop_back();
          return text + " is not allowed (a number, 0 < F <= " + m + ")";
        }
        return "";
      },
      "0<F");
}

}  // namespace framelift::cli
