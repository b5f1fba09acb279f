#include <cstdio>

#include "cli/commands.h"
#include "framelift/probe.h"

namespace framelift::cli {

void add_probe_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("probe", "Describe a video: streams, size, rate, frame count, color, HDR");
  auto input = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto fast = std::make_shared<bool>(false);
  cmd->add_option("-i,--input", *input, "Input file or URL")->required();
  cmd->add_flag("--json", *json, "Print JSON instead of text");
  cmd->add_flag("--fast", *fast, "Do not read the file to count frames exactly");
  cmd->footer("Example:\n  framelift probe -i clip.mkv --json");
  cmd->callback([=, &selected] {
    selected = [=] {
      const ProbeFormat format = *json ? ProbeFormat::Json : ProbeFormat::Text;
      const std::string text = probe(*input, {.count_frames = !*fast, .format = format}) + (*json ? "\n" : "");
      std::fwrite(text.data(), 1, text.size(), stdout);
      return 0;
    };
  });
}

}  // namespace framelift::cli
