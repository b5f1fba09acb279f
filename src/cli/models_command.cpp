#include <cstdio>

#include "cli/commands.h"
#include "models/model_files.h"

namespace framelift::cli {

void add_models_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("models", "List models and describe model files");
  cmd->require_subcommand(1);
  auto* list = cmd->add_subcommand("list", "Models found on the model search path");
  list->callback([&selected] {
    selected = [] {
      for (const std::string& name : models::available_model_names()) std::printf("%s\n", name.c_str());
      return 0;
    };
  });
  auto* info = cmd->add_subcommand("info", "Detected architecture, scale, channels and size of a model");
  auto target = std::make_shared<std::string>();
  info->add_option("MODEL", *target, "Model name or file (.param, .pth, .safetensors)")->required();
  info->footer("Examples:\n  framelift models info realesr-animevideov3-x2\n  framelift models info 4x-model.pth");
  info->callback([target, &selected] {
    selected = [target] {
      std::printf("%s\n", models::describe_model_file(*target).c_str());
      return 0;
    };
  });
}

}  // namespace framelift::cli
