// What is at the output path is never lost and never half-written, whatever else happens there:
// a batch told to write into its own input folder is refused before it writes anything; a plain
// run killed with SIGKILL leaves no file under the final name and the next run clears its
// partial.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.insert(fs::relative(e.path(), dir).string());
  return names;
}

std::vector<std::string> error_lines(const std::string& output) {
  std::vector<std::string> lines;
  static const std::regex line("(^|\n)(error: [^\n]*)");
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it) lines.push_back((*it)[2]);
  return lines;
}

std::set<int> segments_done(const std::string& log) {
  std::set<int> done;
  static const std::regex line("segment ([0-9]+) done");
  for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it) done.insert(std::stoi((*it)[1]));
  return done;
}

int video_width(const fs::path& file) { return ffprobe(file)["streams"][0]["width"].get<int>(); }

// 48 frames of real footage in 12 segments: long enough (a second or two) to act while it runs.
std::string job_args(const fs::path& out, const std::string& pipeline) {
  return "run -i " + shell_quote(media("real_megamind.mkv")) + " -o " + shell_quote(out) + " --pipeline " + pipeline +
         " -c ffv1 --segment-frames 4 --progress none";
}

TEST(OutputRaces, BatchIntoItsOwnInputFolderIsRefusedBeforeAnythingIsWritten) {
  const fs::path dir = temp_dir("race-batch");
  fs::create_directories(dir / "in");
  fs::copy_file(media("cfr_8bit.mkv"), dir / "in" / "a.mkv");
  fs::copy_file(media("vfr.mkv"), dir / "in" / "c.mkv");
  const std::string a = read(dir / "in" / "a.mkv");
  const std::set<std::string> before = names_in(dir);
  // The same folder under three spellings.
  for (const fs::path& out : {dir / "in", dir / "in" / "", dir / "in" / ".." / "in"}) {
    const CliResult r = framelift("run -i " + shell_quote(dir / "in") + " -o " + shell_quote(out) +
                                  " --pipeline resize:scale=0.5 --progress none");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    const auto lines = error_lines(r.output);
    ASSERT_EQ(lines.size(), 1u) << r.output;
    EXPECT_NE(lines[0].find("the output folder holds the batch's inputs"), std::string::npos) << lines[0];
    EXPECT_EQ(r.output.find("done"), std::string::npos) << "no input may be reported done:\n" << r.output;
    EXPECT_EQ(names_in(dir), before) << "nothing written, nothing removed";
  }
  EXPECT_EQ(read(dir / "in" / "a.mkv"), a);
}

TEST(OutputRaces, PlainRunKilledWithSigkillLeavesNoFinalFileAndTheNextRunClearsItsPartial) {
  const fs::path dir = temp_dir("race-kill");
  const std::string args = "run --no-job -i " + shell_quote(media("real_megamind.mkv")) + " -o " +
                           shell_quote(dir / "out.mkv") + " --pipeline resize:scale=0.5 -c ffv1 --progress none";
  // SIGKILL at the 20th encoded frame: no destructor, no cleanup.
  ASSERT_EQ(run_command("FRAMELIFT_CRASH_AT=encode:20 " + shell_quote(cli_path()) + " " + args + " >/dev/null 2>&1"),
            128 + 9);
  EXPECT_FALSE(fs::exists(dir / "out.mkv")) << "a killed run left a file under the final name";
  std::set<std::string> partials = names_in(dir);
  ASSERT_EQ(partials.size(), 1u) << "the partial of the killed run";
  EXPECT_NE(partials.begin()->find(".out.partial-"), std::string::npos) << *partials.begin();
  EXPECT_GT(fs::file_size(dir / *partials.begin()), 0u);

  const CliResult again = framelift(args);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(names_in(dir), std::set<std::string>{"out.mkv"}) << "the stale partial is gone";
  EXPECT_EQ(count_frames(dir / "out.mkv"), 48);
}

}  // namespace
}  // namespace framelift::test
