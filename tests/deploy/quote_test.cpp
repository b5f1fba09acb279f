#include "deploy/quote.h"

#include <gtest/gtest.h>

#include "support/test_paths.h"
#include "util/error.h"

namespace framelift::deploy {
namespace {

// The shell must read back exactly the word that was quoted, whatever it contains.
TEST(ShellQuote, RoundTripsThroughSh) {
  for (std::string word : {"plain", "/data/job 1/x", "it's", "$HOME `id` $(id)", "*?[a]", "a\\b", "\"q\"", "tab\there",
                           "new\nline", "", "-n", "é ü"}) {
    std::string out;
    ASSERT_EQ(test::run_command("printf '%s' " + shell_quote(word), &out), 0) << word;
    EXPECT_EQ(out, word) << "quoted as " << shell_quote(word);
  }
}

TEST(ShellQuote, LeavesPlainWordsAlone) {
  EXPECT_EQ(shell_quote("/usr/bin/framelift"), "/usr/bin/framelift");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(YamlQuote, EscapesLikeJson) {
  EXPECT_EQ(yaml_quote("/data/a \"b\""), "\"/data/a \\\"b\\\"\"");
  EXPECT_EQ(yaml_quote("é"), "\"\\u00e9\"");
  EXPECT_THROW(yaml_quote("\xff"), Error);
}

}  // namespace
}  // namespace framelift::deploy
