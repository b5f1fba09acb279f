// Names that are not UTF-8 (issue 29, item 4): a Latin-1 "café.mkv" is a valid POSIX name, and
// `probe --json` and every job on it ended in "internal error: [json.exception.type_error.316]".
// Reports a person reads replace each such byte with U+FFFD; files framelift reads back (job.json)
// keep the bytes (util/json_path.h), so a job on such a file runs, resumes and assembles.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "support/media_check.h"
#include "util/json_path.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

const std::string kLatin1Cafe = "caf\xe9";  // "café" in Latin-1: 0xe9 alone is not UTF-8

TEST(NonUtf8Names, ProbeJsonReplacesTheBytesAndSaysTheRest) {
  const fs::path dir = temp_dir("non-utf8-probe");
  const fs::path input = dir / (kLatin1Cafe + ".mkv");
  fs::copy_file(media("cfr_8bit.mkv"), input);
  const CliResult r = framelift("probe --json -i " + shell_quote(input));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t open = r.output.find('{');
  ASSERT_NE(open, std::string::npos) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output.substr(open));
  EXPECT_NE(j.dump().find("caf\xef\xbf\xbd.mkv"), std::string::npos) << "U+FFFD for the byte: " << r.output;
  EXPECT_FALSE(j.dump().find("streams") == std::string::npos) << r.output;
}

TEST(NonUtf8Names, AJobOnSuchAFileRunsResumesAndKeepsTheNameExactly) {
  const fs::path dir = temp_dir("non-utf8-job");
  const fs::path input = dir / (kLatin1Cafe + ".mkv"), output = dir / ("out-" + kLatin1Cafe + ".mkv");
  fs::copy_file(media("cfr_8bit.mkv"), input);
  const std::string args = "run -i " + shell_quote(input) + " -o " + shell_quote(output) +
                           " --pipeline resize:scale=0.5 -c ffv1 --segment-frames 8 --keep-job";
  const CliResult r = framelift("--log-level warn " + args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  ASSERT_TRUE(fs::exists(output));
  EXPECT_EQ(count_frames(output), count_frames(input));
  // job.json holds the name's bytes, read back to the same file.
  const fs::path spec = fs::path(output.string() + ".framelift-job") / "job.json";
  ASSERT_TRUE(fs::exists(spec)) << "--keep-job keeps the folder";
  std::ifstream in(spec);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(path_from_json(j["input"]), input.string());
  EXPECT_EQ(path_from_json(j["output"]), output.string());
  // The same command again resumes the job: the spec read back compares equal to the new one.
  const CliResult again = framelift(args + " -y");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("6 of 6 segment(s) already done"), std::string::npos) << again.output;
}

// Text other than a file name cannot be kept byte for byte in job.json: refused before the
// job folder exists, and --no-job runs it.
TEST(NonUtf8Names, OtherTextAJobCannotKeepIsRefusedLeavingNothing) {
  const fs::path dir = temp_dir("non-utf8-text");
  const fs::path output = dir / "tagged.mkv";
  const std::string args = "--log-level warn run -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(output) +
                           " -c ffv1 --pipeline \"filter:graph='metadata=mode=add:key=k:value=" + kLatin1Cafe + "'\"";
  const CliResult r = framelift(args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("job.json: cannot be written: the pipeline or an option holds text that is not UTF-8"),
            std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(output));
  EXPECT_FALSE(fs::exists(output.string() + ".framelift-job")) << "no folder left behind";
  const CliResult plain = framelift(args + " --no-job");
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_TRUE(fs::exists(output));
}

TEST(NonUtf8Names, PathJsonRoundTripsEveryByteAndLeavesUtf8Plain) {
  EXPECT_EQ(path_json("clips/caf\xc3\xa9.mkv"), nlohmann::json("clips/caf\xc3\xa9.mkv"));
  std::string every;
  for (int b = 1; b < 256; ++b) every += char(b);
  const nlohmann::json j = path_json(every);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(path_from_json(nlohmann::json::parse(j.dump())), every);
  EXPECT_FALSE(path_from_json(nlohmann::json{{"bytes", "abc"}}));  // odd length: damaged
  EXPECT_FALSE(path_from_json(nlohmann::json(5)));
  EXPECT_FALSE(is_utf8("\xed\xa0\x80"));  // a surrogate
  EXPECT_FALSE(is_utf8("\xc0\xaf"));      // overlong
  EXPECT_FALSE(is_utf8("\xe2\x82"));      // cut short
  EXPECT_TRUE(is_utf8("\xf0\x9f\x8e\xac"));
}

}  // namespace
}  // namespace framelift::test
