#include "deploy_test_util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace framelift::test {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_script(const fs::path& path, const std::string& body) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "#!/bin/bash\n" << body;
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
}

std::string content_of(const std::vector<deploy::DeployFile>& files, const std::string& name) {
  for (const auto& f : files)
    if (f.path.filename() == name) return f.content;
  ADD_FAILURE() << "no generated file named " << name;
  return "";
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace framelift::test
