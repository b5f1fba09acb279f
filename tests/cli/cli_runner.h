#pragma once
// Runs the built framelift binary for end-to-end tests.
#include <string>

#include <nlohmann/json.hpp>

#include "support/test_paths.h"

namespace framelift::test {

struct CliResult {
  int exit_code;
  std::string output;  // stdout + stderr
};

// Appended rather than `"'" + p.string()`: GCC 12 at -O3 misreads that as an overlapping memcpy
// (-Wrestrict) in every test that includes this header.
inline std::string shell_quote(const std::filesystem::path& p) {
  std::string quoted(1, '\'');
  quoted += p.string();
  quoted += '\'';
  return quoted;
}

inline CliResult framelift(const std::string& args) {
  CliResult r;
  std::string command = shell_quote(cli_path());
  command += ' ';
  command += args;
  r.exit_code = run_command(command, &r.output);
  return r;
}

}  // namespace framelift::test
