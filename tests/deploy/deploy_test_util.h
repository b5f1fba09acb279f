#pragma once
// Helpers for the deploy tests: generated files on disk, stub programs, a shell to run them in.
#include <filesystem>
#include <string>
#include <vector>

#include "deploy/deploy_file.h"

namespace framelift::test {

std::string read_text(const std::filesystem::path& path);

// An executable shell script at `path` with `body` after the #! line.
void write_script(const std::filesystem::path& path, const std::string& body);

// The content of the file in `files` whose name is `name`; fails the test when absent.
std::string content_of(const std::vector<deploy::DeployFile>& files, const std::string& name);

// Lines of a file, without their newlines.
std::vector<std::string> read_lines(const std::filesystem::path& path);

}  // namespace framelift::test
