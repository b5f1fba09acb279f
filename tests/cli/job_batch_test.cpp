// A batch: every video of a folder (or a list) becomes its own job; a bad one is recorded with its
// reason and the others still finish; a rerun skips what is done.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

TEST(JobBatch, FolderOfInputsWithOneBadFileAndARerun) {
  auto dir = temp_dir("job-batch");
  fs::create_directories(dir / "in");
  fs::copy_file(media("cfr_8bit.mkv"), dir / "in" / "a.mkv");
  fs::copy_file(media("not_media.mkv"), dir / "in" / "b.mkv");
  fs::copy_file(media("vfr.mkv"), dir / "in" / "c.mkv");
  { std::ofstream(dir / "in" / "notes.txt") << "not a video, not taken"; }
  const std::string args = "run -i " + shell_quote(dir / "in") + " -o " + shell_quote(dir / "out") +
                           " --pipeline resize:scale=0.5 --segment-frames 20 --progress none";
  auto r = framelift(args);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(count_frames(dir / "out" / "a.mkv"), count_frames(media("cfr_8bit.mkv")));
  EXPECT_EQ(count_frames(dir / "out" / "c.mkv"), count_frames(media("vfr.mkv")));
  EXPECT_FALSE(fs::exists(dir / "out" / "b.mkv"));
  auto summary = read_json(dir / "out" / "framelift-batch.json");
  EXPECT_EQ(summary["done"].size(), 2u) << summary.dump();
  ASSERT_EQ(summary["failed"].size(), 1u) << summary.dump();
  EXPECT_NE(summary["failed"][0]["input"].get<std::string>().find("b.mkv"), std::string::npos);
  EXPECT_FALSE(summary["failed"][0]["error"].get<std::string>().empty());
  EXPECT_TRUE(summary["remaining"].empty());

  const auto written = fs::last_write_time(dir / "out" / "a.mkv");
  auto again = framelift(args);
  EXPECT_EQ(again.exit_code, 3) << again.output;
  EXPECT_EQ(fs::last_write_time(dir / "out" / "a.mkv"), written) << "a finished output is not redone";

  // The same through a list file, relative paths from the list's folder.
  { std::ofstream(dir / "in" / "list.txt") << "# two of them\na.mkv\n\nc.mkv\n"; }
  auto listed = framelift("run -i " + shell_quote(dir / "in" / "list.txt") + " -o " + shell_quote(dir / "out2") +
                          " --segment-frames 20 --progress none");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_EQ(read_json(dir / "out2" / "framelift-batch.json")["done"].size(), 2u);
}

}  // namespace
}  // namespace framelift::test
