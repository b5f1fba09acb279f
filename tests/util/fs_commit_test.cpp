// The final rename never replaces what is not ours: commit_file_no_replace refuses an existing
// name (renameat2 RENAME_NOREPLACE), and commit_file_aside finds the result a free name.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/test_paths.h"
#include "util/fs.h"

namespace fs = std::filesystem;

namespace framelift {
namespace {

void write(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }
std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(FsCommit, NoReplaceKeepsAFileThatAppearedAndTheResultGoesAside) {
  const fs::path dir = test::temp_dir("commit");
  write(dir / "result.tmp", "ours");
  write(dir / "out.mkv", "theirs");  // appeared at the final name meanwhile
  EXPECT_FALSE(commit_file_no_replace(dir / "result.tmp", dir / "out.mkv"));
  EXPECT_EQ(read(dir / "out.mkv"), "theirs");
  EXPECT_TRUE(fs::exists(dir / "result.tmp")) << "the result is still there to keep";
  write(dir / "out.framelift-1.mkv", "taken too");
  const fs::path aside = commit_file_aside(dir / "result.tmp", dir / "out.mkv");
  EXPECT_EQ(aside, dir / "out.framelift-2.mkv");
  EXPECT_EQ(read(aside), "ours");
  EXPECT_EQ(read(dir / "out.mkv"), "theirs");

  write(dir / "next.tmp", "fresh");
  EXPECT_TRUE(commit_file_no_replace(dir / "next.tmp", dir / "free.mkv"));
  EXPECT_EQ(read(dir / "free.mkv"), "fresh");
  EXPECT_FALSE(write_file_no_replace(dir / "free.mkv", "again"));
  EXPECT_EQ(read(dir / "free.mkv"), "fresh");
}

}  // namespace
}  // namespace framelift
