#pragma once
// Each subcommand registers its options on the CLI11 app and returns the function that runs it.
#include <CLI/CLI.hpp>
#include <functional>

namespace framelift::cli {

using Command = std::function<int()>;

void add_probe_command(CLI::App& app, Command& selected);
void add_run_command(CLI::App& app, Command& selected);
void add_upscale_command(CLI::App& app, Command& selected);
void add_interpolate_command(CLI::App& app, Command& selected);
void add_stages_command(CLI::App& app, Command& selected);
void add_models_command(CLI::App& app, Command& selected);
void add_deploy_command(CLI::App& app, Command& selected);
void add_resume_command(CLI::App& app, Command& selected);
void add_assemble_command(CLI::App& app, Command& selected);
void add_plan_command(CLI::App& app, Command& selected);
void add_profile_command(CLI::App& app, Command& selected);
void add_serve_command(CLI::App& app, Command& selected);
void add_doctor_command(CLI::App& app, Command& selected);

}  // namespace framelift::cli
