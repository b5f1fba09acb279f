// `framelift doctor`: what this machine has for framelift and what it means, in one screen
// (framelift/machine.h gathers and words it; this prints it and picks the exit code).
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/value_checks.h"
#include "framelift/error.h"
#include "framelift/machine.h"

namespace framelift::cli {
namespace {

// "what: value — meaning"; lines worth acting on say so first, so a glance finds them.
void print_findings(const std::vector<MachineFinding>& findings) {
  for (const auto& f : findings) {
    const char* mark = f.level == MachineFinding::Level::Warning ? "warning: "
                       : f.level == MachineFinding::Level::Problem ? "problem: "
                                                                   : "";
    std::printf("%s%s: %s \u2014 %s\n", mark, f.what.c_str(), f.value.c_str(), f.meaning.c_str());
  }
}

}  // namespace

void add_doctor_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("doctor", "What this machine has for framelift (CPU, precision, GPU, encoders, disk, models, downloads)");
  auto options = std::make_shared<MachineReportOptions>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("-o,--output", options->output_dir, "Output folder to check for free space and writability (default: the current folder)");
  cmd->add_flag("--json", *json, "Print the report as JSON instead of text");
  cmd->add_flag("--offline", options->offline, "Do not check that the model download hosts answer (no network request)");
  cmd->add_option("--timeout", options->timeout_s, "Seconds to wait for each download host")
      ->capture_default_str()
      ->check(positive_up_to(600));
  cmd->footer(
      "Exit codes: 0 when the machine can run framelift (warnings, such as an unreachable download\n"
      "host, do not change it); 4 when the output folder does not exist, is not writable or has\n"
      "less than 64 MB free; 2 for a bad option. docs/doctor.md explains each line.\n"
      "Example:\n  framelift doctor -o /data/out");
  cmd->callback([=, &selected] {
    selected = [=] {
      const MachineReport report = machine_report(*options);
      if (*json) std::printf("%s\n", machine_report_json(report).c_str());
      else print_findings(describe_machine(report));
      std::fflush(stdout);
      if (!report.output.problem.empty()) throw Error(ErrorKind::Output, report.output.problem);
      return 0;
    };
  });
}

}  // namespace framelift::cli
