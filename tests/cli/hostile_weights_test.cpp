// The real CLI on crafted weights (issue 30, case 2): a .safetensors whose attention tables have
// zero heads, for each attention architecture, through `models info` and an upscale of a real
// clip. Each prints one line naming the file and the problem and exits 5 (bad model input,
// include/framelift/error.h); before the declared constraints, each died of SIGFPE.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/cli_runner.h"
#include "support/crafted_weights.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

constexpr int kExitModel = 5;  // docs/cli.md, framelift::exit_code(ErrorKind::Model)

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// Exit 5 (a shell reports a signal as 128 + N), one line with the file's name and `problem`.
void expect_refused(const CliResult& r, const fs::path& file, const std::string& problem) {
  EXPECT_EQ(r.exit_code, kExitModel) << r.output;
  const auto lines = lines_of(r.output);
  ASSERT_EQ(lines.size(), 1u) << r.output;
  EXPECT_NE(lines[0].find(file.string()), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(problem), std::string::npos) << lines[0];
}

TEST(HostileWeights, ZeroHeadsModelsInfoExits5WithOneLine) {
  const fs::path dir = temp_dir("cli-zero-heads");
  for (const std::string& arch : attention_architectures()) {
    SCOPED_TRACE(arch);
    const fs::path file = write_zero_heads(dir, arch);
    expect_refused(framelift("models info " + shell_quote(file)), file, "heads 0");
  }
}

TEST(HostileWeights, ZeroHeadsUpscaleExits5WithOneLineAndNoOutput) {
  const fs::path dir = temp_dir("cli-zero-heads-run"), clip = media("cfr_8bit.mkv");
  for (const std::string& arch : attention_architectures()) {
    SCOPED_TRACE(arch);
    const fs::path file = write_zero_heads(dir, arch), out = dir / (arch + ".mkv");
    const auto r = framelift("run -i " + shell_quote(clip) + " -o " + shell_quote(out) + " --pipeline 'upscale:model=" +
                             file.string() + "' --frames 1 --progress none");
    expect_refused(r, file, "heads 0");
    EXPECT_FALSE(fs::exists(out));
  }
}

}  // namespace
}  // namespace framelift::test
