// What is at the output path is never lost and never half-written, whatever else happens there:
// a batch told to write into its own input folder is refused before it writes anything; a plain
// run killed with SIGKILL leaves no file under the final name and the next run clears its
// partial; a file created at the output while a job makes its segments is kept (the result goes
// next to it, and the error says where); two runs started at once on one output either join as
// workers of one job (same pipeline) or the second is refused (another pipeline).
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

TEST(OutputRaces, FileCreatedAtTheOutputDuringAJobIsKeptAndTheResultGoesNextToIt) {
  const fs::path dir = temp_dir("race-appear");
  const fs::path out = dir / "out.mkv";
  // Once the first segment is on disk the job is stopped (SIGSTOP), someone else's file is put at
  // the output, and the job goes on: deterministic, whatever the machine's speed.
  const std::string script = shell_quote(cli_path()) + " " + job_args(out, "resize:scale=0.5") + " > " +
                             shell_quote(dir / "log") + " 2>&1 & p=$!; " +
                             "while [ ! -e " + shell_quote(dir / "out.mkv.framelift-job/segments/000000.mkv") +
                             " ]; do sleep 0.005; done; kill -STOP $p; " +
                             "if [ -e " + shell_quote(out) + " ]; then echo finished-too-early; fi; " +
                             "printf theirs > " + shell_quote(out) + "; kill -CONT $p; wait $p";
  std::string said;
  const int rc = run_command(script, &said);
  const std::string log = read(dir / "log");
  ASSERT_EQ(said.find("finished-too-early"), std::string::npos) << log;
  EXPECT_EQ(rc, 4) << log;
  EXPECT_EQ(read(out), "theirs") << "the file that appeared was replaced";
  const fs::path kept = dir / "out.framelift-1.mkv";
  ASSERT_TRUE(fs::exists(kept)) << log;
  EXPECT_EQ(count_frames(kept), 48);
  const auto lines = error_lines(log);
  ASSERT_EQ(lines.size(), 1u) << log;
  EXPECT_NE(lines[0].find(out.string()), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("kept as " + kept.string()), std::string::npos) << lines[0];
}

TEST(OutputRaces, TwoRunsWithAnotherPipelineOnOneOutputTheSecondIsRefused) {
  const fs::path dir = temp_dir("race-two-specs");
  const fs::path out = dir / "out.mkv";
  const std::string cli = shell_quote(cli_path());
  const int rc = run_command("( " + cli + " " + job_args(out, "resize:scale=0.5") + " > " + shell_quote(dir / "a.log") +
                             " 2>&1; echo $? > " + shell_quote(dir / "a.rc") + " ) & " + cli + " " +
                             job_args(out, "resize:scale=0.25") + " > " + shell_quote(dir / "b.log") + " 2>&1; echo $? > " +
                             shell_quote(dir / "b.rc") + "; wait");
  ASSERT_EQ(rc, 0);
  const int a = std::stoi(read(dir / "a.rc")), b = std::stoi(read(dir / "b.rc"));
  const std::string a_log = read(dir / "a.log"), b_log = read(dir / "b.log");
  ASSERT_EQ(std::set<int>({a, b}), std::set<int>({0, 2})) << a_log << "\n----\n" << b_log;
  const std::string& loser = a == 2 ? a_log : b_log;
  const auto lines = error_lines(loser);
  ASSERT_EQ(lines.size(), 1u) << loser;
  EXPECT_NE(lines[0].find("out.mkv.framelift-job"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("--restart"), std::string::npos) << lines[0];
  // The winner's frames alone: its size, every frame.
  EXPECT_EQ(video_width(out), a == 0 ? 720 / 2 : 720 / 4);
  EXPECT_EQ(count_frames(out), 48);
}

TEST(OutputRaces, TwoRunsWithTheSamePipelineOnOneOutputShareTheJob) {
  const fs::path dir = temp_dir("race-same-spec");
  fs::create_directories(dir / "out");
  const fs::path out = dir / "out" / "out.mkv";
  const std::string cli = shell_quote(cli_path()) + " --log-level debug";
  const std::string args = job_args(out, "resize:scale=0.5");
  const int rc = run_command("( " + cli + " " + args + " > " + shell_quote(dir / "a.log") + " 2>&1 & a=$!; " + cli + " " +
                             args + " > " + shell_quote(dir / "b.log") + " 2>&1 & b=$!; wait $a && wait $b )");
  const std::string a = read(dir / "a.log"), b = read(dir / "b.log");
  ASSERT_EQ(rc, 0) << a << "\n----\n" << b;
  const std::set<int> by_a = segments_done(a), by_b = segments_done(b);
  for (int s : by_a) EXPECT_FALSE(by_b.count(s)) << "segment " << s << " processed by both runs";
  EXPECT_EQ(by_a.size() + by_b.size(), 12u) << a << "\n----\n" << b;
  EXPECT_EQ(count_frames(out), 48);
  EXPECT_EQ(names_in(dir / "out"), std::set<std::string>{"out.mkv"}) << "one output, no copy aside, no job folder left";
}

}  // namespace
}  // namespace framelift::test
