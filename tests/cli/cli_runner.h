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

// Built by appending: GCC 12 inlines "'" + string&& into a false -Wstringop-overflow in some callers.
inline std::string shell_quote(const std::filesystem::path& p) {
  std::string q = "'";
  q += p.string();
  q += "'";
  return q;
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
