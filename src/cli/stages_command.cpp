#include <cstdio>

#include "cli/commands.h"
#include "framelift/pipeline.h"

namespace framelift::cli {

void add_stages_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("stages", "List the stages usable in --pipeline, with their options");
  cmd->callback([&selected] {
    selected = [] {
      for (const StageInfo& s : list_stages())
        std::printf("%-12s %s\n%-12s options: %s\n", s.name.c_str(), s.summary.c_str(), "", s.usage.c_str());
      return 0;
    };
  });
}

}  // namespace framelift::cli
