// `framelift plan` end to end on a real clip: a ranked JSON plan whose recommendation fits its
// card with the 20% margin, a deadline that no card meets is said so, and a self-contained page.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/cli_runner.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

nlohmann::json plan_json(const std::string& extra) {
  auto r = framelift("--log-level warn plan -i " + shell_quote(media("real_megamind.mkv")) +
                     " --pipeline upscale:model=realesrgan-x4plus --json " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output.substr(r.output.find('{')));
}

TEST(PlanCommand, RecommendsAFittingCardAndWritesAPage) {
  const nlohmann::json plan = plan_json("");
  ASSERT_GT(plan["rows"].size(), 10u);
  int recommended = 0;
  for (const auto& row : plan["rows"]) {
    if (!row.value("recommended", false)) continue;
    ++recommended;
    EXPECT_EQ(row["fits"], "yes") << row.dump();
    EXPECT_GE(row["memory_free"].get<double>(), 0.2) << row.dump();
  }
  EXPECT_EQ(recommended, 1);
  EXPECT_NE(plan["recommendation"].get<std::string>().find("Recommended"), std::string::npos);

  const fs::path page = temp_dir("plan") / "plan.html";
  auto r = framelift("--log-level warn plan -i " + shell_quote(media("real_megamind.mkv")) + " --html " + shell_quote(page));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(html.find("<svg"), std::string::npos);
  // Self-contained: nothing fetched (the SVG namespace URI is a name, not a request).
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST(PlanCommand, MissingInputIsAClearError) {
  auto r = framelift("plan -i " + shell_quote(temp_dir("plan-missing") / "nope.mkv"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("nope.mkv"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace framelift::test
