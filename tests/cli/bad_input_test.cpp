// Every kind of bad input gives one clear error line naming the file, a non-zero exit, no crash,
// and nothing under the output's final name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_runner.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

// The error line: starts with "error: ", names `name`, and is the only error line.
void expect_one_error_line(const std::string& output, const std::string& name, const std::string& problem) {
  size_t pos = output.find("error: ");
  ASSERT_NE(pos, std::string::npos) << output;
  std::string line = output.substr(pos, output.find('\n', pos) - pos);
  EXPECT_NE(line.find(name), std::string::npos) << line;
  EXPECT_NE(line.find(problem), std::string::npos) << line;
  EXPECT_EQ(output.find("error: ", pos + 1), std::string::npos) << output;
}

void expect_no_output_left(const fs::path& out) {
  EXPECT_FALSE(fs::exists(out)) << out;
  for (auto& e : fs::directory_iterator(out.parent_path()))
    EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos) << "left behind: " << e.path();
}

struct BadCase {
  std::string input;
  int exit_code;
  std::string problem;
};

TEST(BadInput, EachGivesOneClearErrorAndNoOutput) {
  auto dir = temp_dir("bad");
  BadCase cases[] = {
      {(dir / "missing.mkv").string(), 3, "no such file"},
      {media("not_media.mkv").string(), 3, "not a media file"},
      {media("truncated.mkv").string(), 3, "truncated"},
      {media("zero_frames.mkv").string(), 3, "no frames"},
      {dir.string(), 3, "no videos to process"},  // a folder is a batch; this one holds no video
  };
  for (const auto& c : cases) {
    auto out = dir / "out.mkv";
    auto r = framelift("run -i " + shell_quote(c.input) + " -o " + shell_quote(out));
    EXPECT_EQ(r.exit_code, c.exit_code) << c.input << "\n" << r.output;
    expect_one_error_line(r.output, fs::path(c.input).filename().string(), c.problem);
    expect_no_output_left(out);
  }
}

TEST(BadInput, CorruptPacketsAreCountedOrFail) {
  auto in = media("corrupt.ts");
  auto dir = temp_dir("corrupt");
  auto skipped = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(dir / "skip.mkv") + " --preset ultrafast");
  ASSERT_EQ(skipped.exit_code, 0) << skipped.output;
  EXPECT_NE(skipped.output.find("corrupt frame(s) or packet(s) were skipped"), std::string::npos) << skipped.output;
  EXPECT_TRUE(fs::exists(dir / "skip.mkv"));

  auto failed = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(dir / "fail.mkv") + " --on-decode-error fail");
  EXPECT_EQ(failed.exit_code, 3) << failed.output;
  expect_one_error_line(failed.output, "corrupt.ts", "corrupt video data");
  expect_no_output_left(dir / "fail.mkv");
}

TEST(BadOutput, UnwritableFolderMissingFolderAndExistingFile) {
  auto in = media("cfr_8bit.mkv");
  auto r = framelift("run -i " + shell_quote(in) + " -o /proc/framelift-out.mkv");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  expect_one_error_line(r.output, "framelift-out.mkv", "cannot write");

  auto dir = temp_dir("out");
  r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(dir / "nope" / "out.mkv"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  expect_one_error_line(r.output, "out.mkv", "does not exist");

  auto existing = dir / "existing.mkv";
  { std::ofstream(existing) << "keep me"; }
  r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(existing));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  expect_one_error_line(r.output, "existing.mkv", "already exists");
  EXPECT_EQ(fs::file_size(existing), 7u);

  r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(in) + " -y");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  expect_one_error_line(r.output, "cfr_8bit.mkv", "overwrite the input");
}

TEST(BadOutput, FullDiskLeavesNothingUnderTheFinalName) {
  auto in = media("real_megamind.mkv");
  auto dir = temp_dir("full");
  auto out = dir / "out.mkv";
  // A 200 KiB file size limit stands in for a full disk: writes fail with EFBIG like ENOSPC.
  std::string output;
  int rc = run_command("ulimit -f 200; '" + cli_path().string() + "' run -i " + shell_quote(in) + " -o " + shell_quote(out) +
                           " -c ffv1",
                       &output);
  EXPECT_EQ(rc, 4) << output;
  expect_one_error_line(output, "out.mkv", "file too large");
  expect_no_output_left(out);
}

// The clip's SubRip track goes into MP4 as mov_text (tests/cli/subtitle_conversion_test.cpp);
// its font attachment has no place there. It used to reach write_header, whose "Invalid
// argument" named nothing.
TEST(BadOutput, ContainerThatCannotHoldAStream) {
  auto in = media("cfr_8bit.mkv");
  for (const std::string job : {"--no-job", ""}) {
    auto out = temp_dir("container") / "out.mp4";
    auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(out) + " " + job);
    EXPECT_EQ(r.exit_code, 4) << r.output;
    expect_one_error_line(r.output, "out.mp4", "the mp4 container cannot hold the attachment stream #3 (ttf); use .mkv, which holds it");
    expect_no_output_left(out);
  }
}

TEST(BadUsage, UnknownStageOptionEncoderAndEncoderOption) {
  auto in = media("cfr_8bit.mkv");
  auto dir = temp_dir("usage");
  struct { std::string args, problem; } cases[] = {
      {"--pipeline sharpen", "unknown stage 'sharpen'"},
      {"--pipeline resize:factor=2", "unknown option 'factor'"},
      // Values outside the stage's declared options: refused before anything is read or written.
      {"--pipeline resize:scale=nan", "stage resize: scale=nan is not allowed (a number, 0 < F <= 16)"},
      {"--pipeline interpolate:factor=0", "stage interpolate: factor=0 is not allowed (a whole number, 1 <= N <= 16)"},
      {"--pipeline resize:scale=2:scale=3", "sets scale twice"},
      {"--pipeline upscale --threads 100000", "--threads 100000 is out of range (1 to 1024"},
      // The command line parser's own errors: exit 2 as well (CLI11 returns 105-109 by itself).
      {"--frames 2 --frames 3", "--frames: At Most 1 required but received 2"},
      {"--frames two", "--frames: two is not allowed (a whole number >= 1)"},
      {"--no-such-flag", "The following argument was not expected: --no-such-flag"},
      {"-c nosuchcodec", "unknown video encoder 'nosuchcodec'"},
      {"-c ffv1 --crf 20", "has no option 'crf'"},
  };
  for (const auto& c : cases) {
    auto r = framelift("run -i " + shell_quote(in) + " -o " + shell_quote(dir / "o.mkv") + " " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.problem), std::string::npos) << r.output;
    expect_no_output_left(dir / "o.mkv");
  }
}

}  // namespace
}  // namespace framelift::test
