#pragma once
// Runs the built framelift binary for end-to-end tests.
#include <string>

#include <gtest/gtest.h>
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

// `plan --local --gpu cpu --json` of `pipeline` on `input` (FFV1, fp32): the first stage's
// architecture and seconds per frame on the CPU row. A failure of the test, and 0, when the plan
// fails, says "counted as free" or has no CPU row.
struct PlannedStage {
  std::string arch;
  double seconds_per_frame = 0;
};
inline PlannedStage plan_first_stage_on_cpu(const std::filesystem::path& input, const std::string& pipeline) {
  auto p = framelift("--log-level warn plan -i " + shell_quote(input) + " --pipeline '" + pipeline +
                     "' --local --gpu cpu --json -c ffv1 --precision fp32");
  PlannedStage s;
  if (p.exit_code != 0 || p.output.find("counted as free") != std::string::npos || p.output.find('{') == std::string::npos) {
    ADD_FAILURE() << p.output;
    return s;
  }
  const auto plan = nlohmann::json::parse(p.output.substr(p.output.find('{')));
  s.arch = plan["job"]["stages"][0].value("arch", "");
  for (const auto& row : plan["rows"])
    if (row["gpu"] == "cpu") s.seconds_per_frame = row["stages"][0]["seconds_per_frame"].get<double>();
  if (!(s.seconds_per_frame > 0)) ADD_FAILURE() << "no priced CPU row: " << p.output;
  return s;
}

}  // namespace framelift::test
