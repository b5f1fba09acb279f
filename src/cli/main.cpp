// framelift: the command-line front end. Parsing, progress and exit codes only; the work is in
// the library.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "framelift/process.h"
#include "util/log.h"

int main(int argc, char** argv) {
  using namespace framelift;
  // A full disk or a file size limit must surface as a write error with a message, not kill us.
  std::signal(SIGXFSZ, SIG_IGN);
  // SIGINT/SIGTERM stop the work at the next frame or tile, keeping finished segments.
  install_signal_handlers();
  route_ffmpeg_log();

  CLI::App app{"framelift: AI video enhancement (upscale, interpolate, restore) on CPUs and rented GPUs"};
  app.set_version_flag("--version", std::string("framelift ") + FRAMELIFT_VERSION);
  app.require_subcommand(1);
  std::string level = "info";
  app.add_option("--log-level", level, "trace, debug, info, warn, error or quiet")->capture_default_str();
  app.footer(
      "Examples:\n"
      "  framelift probe -i clip.mkv\n"
      "  framelift run -i clip.mkv -o out.mkv --pipeline \"resize:scale=2\" -c libx265 --crf 20\n"
      "  framelift upscale -i clip.mkv -o clip_x2.mkv -m realesr-animevideov3-x2\n"
      "  framelift interpolate -i clip.mkv -o clip60.mkv --fps 60\n"
      "  framelift resume --job-dir clip60.mkv.framelift-job      # after a crash or a reclaimed instance\n"
      "  framelift models list --installed\n"
      "  framelift stages\n"
      "  framelift doctor                  # what this machine has for framelift, and what it means\n"
      "Run `framelift COMMAND --help` for the options of a command.");

  cli::Command command;
  cli::add_probe_command(app, command);
  cli::add_run_command(app, command);
  cli::add_upscale_command(app, command);
  cli::add_interpolate_command(app, command);
  cli::add_stages_command(app, command);
  cli::add_models_command(app, command);
  cli::add_deploy_command(app, command);
  cli::add_resume_command(app, command);
  cli::add_assemble_command(app, command);
  cli::add_plan_command(app, command);
  cli::add_profile_command(app, command);
  cli::add_serve_command(app, command);
  cli::add_doctor_command(app, command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0: print what they print.
    if (e.get_exit_code() == 0) return app.exit(e);
    // A bad command line is a usage error like any other: one line, exit 2 (README).
    log::error(e.what(), " (see framelift --help)");
    return cli::exit_code(ErrorKind::Usage);
  }
  try {
    log::set_level(log::parse_level(level));
    return command();
  } catch (const Error& e) {
    log::error(e.what());
    return cli::exit_code(e.kind());
  } catch (const std::exception& e) {
    log::error("internal error: ", e.what());
    return cli::kExitInternal;
  }
}
