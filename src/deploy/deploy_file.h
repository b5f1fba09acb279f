#pragma once
// What a deployment generator produces: files under the job folder, written all or nothing per file.
#include <filesystem>
#include <string>
#include <vector>

namespace framelift::deploy {

struct DeployFile {
  std::filesystem::path path;  // absolute
  std::string content;
  bool executable = false;     // 0755 instead of 0644
};

// Creates the folders and writes each file atomically (temp, fsync, rename), so a half-written
// script is never submitted. Throws Error(Output).
void write_deploy_files(const std::vector<DeployFile>& files);

}  // namespace framelift::deploy
