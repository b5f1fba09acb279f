#pragma once
// What each `framelift models ...` subcommand does; models_command.cpp only parses. Each returns
// the exit code: 0, or the code of the first problem's kind (exit_codes.h) after printing one
// line per problem.
#include <string>
#include <vector>

namespace framelift::cli {

int list_models(bool installed_only, bool as_json);
int print_model_info(const std::string& name_or_file);
int install_models(const std::vector<std::string>& names, const std::string& from_dir, bool download);
int import_models(const std::string& path, const std::string& name);
int verify_models(const std::vector<std::string>& names);
int remove_models(const std::vector<std::string>& names);

}  // namespace framelift::cli
