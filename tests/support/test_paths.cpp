#include "support/test_paths.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace fs = std::filesystem;

namespace framelift::test {
namespace {
struct TempDirs {
  std::vector<fs::path> paths;
  ~TempDirs() {
    if (std::getenv("FRAMELIFT_KEEP_TEST_FILES")) return;
    std::error_code ec;
    for (auto& p : paths) fs::remove_all(p, ec);
  }
};
TempDirs& temp_dirs() {
  static TempDirs dirs;
  return dirs;
}
}  // namespace

fs::path media_dir() { return FRAMELIFT_TEST_MEDIA_DIR; }

fs::path media(const std::string& name) {
  fs::path p = media_dir() / name;
  if (!fs::exists(p)) ADD_FAILURE() << "test clip missing: " << p << " (run make_test_media)";
  return p;
}

fs::path deps_dir() { return FRAMELIFT_DEPS_DIR; }
fs::path npm_package(const std::string& name) { return deps_dir() / "npm" / name / "package"; }
fs::path cli_path() { return FRAMELIFT_CLI_PATH; }
fs::path source_dir() { return FRAMELIFT_SOURCE_DIR; }

fs::path temp_dir(const std::string& tag) {
  std::string pattern = (fs::temp_directory_path() / ("framelift-" + tag + "-XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  fs::path p(buf.data());
  temp_dirs().paths.push_back(p);
  return p;
}

int run_command(const std::string& command, std::string* output) {
  std::string full = command + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(full.c_str(), "r"), pclose);
  if (!pipe) return -1;
  std::array<char, 4096> buf{};
  std::string out;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0) out.append(buf.data(), n);
  int status = pclose(pipe.release());
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace framelift::test
