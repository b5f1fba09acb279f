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

inline CliResult framelift(const std::string& args) {
  CliResult r;
  r.exit_code = run_command("'" + cli_path().string() + "' " + args, &r.output);
  return r;
}

inline std::string shell_quote(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

}  // namespace framelift::test
