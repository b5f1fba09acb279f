#include <cstdio>

#include "cli/commands.h"
#include "pipeline/stage_registry.h"

namespace framelift::cli {

void add_stages_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("stages", "List the stages usable in --pipeline, with their options");
  cmd->callback([&selected] {
    selected = [] {
      for (const auto& s : pipeline::registered_stages())
        std::printf("%-12s %s\n%-12s options: %s\n", s.name.c_str(), s.summary.c_str(), "",
                    pipeline::describe_options(s.options).c_str());
      return 0;
    };
  });
}

}  // namespace framelift::cli
