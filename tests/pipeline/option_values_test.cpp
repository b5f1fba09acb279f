// Stage options come typed and complete (issue 28, item 2): validate_options fills every option a
// stage declares from the stage's text, else the command line's default, else the schema's, so
// that a default is spelled in one place. Before, stages re-read their options with fallbacks of
// their own (`get_double("factor", 0)` beside a schema default of 2; "rife-v4.6" spelled twice).
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/option_schema.h"
#include "pipeline/stage_registry.h"
#include "util/error.h"

namespace framelift::pipeline {
namespace {

// The schema's default read back through the accessor its type has.
void expect_default(const std::string& stage, const OptionSpec& o, const OptionValues& v) {
  const std::string what = stage + " " + o.name + " (default '" + o.default_value + "')";
  EXPECT_FALSE(v.given(o.name)) << what;
  if (o.default_value.empty()) {
    EXPECT_FALSE(v.has(o.name)) << what << ": an option without a default has no value until given";
    return;
  }
  ASSERT_TRUE(v.has(o.name)) << what;
  switch (o.type) {
    case OptionType::Integer: EXPECT_EQ(v.integer(o.name), std::atoll(o.default_value.c_str())) << what; break;
    case OptionType::Number: EXPECT_EQ(v.number(o.name), std::atof(o.default_value.c_str())) << what; break;
    case OptionType::Flag: EXPECT_EQ(v.flag(o.name), o.default_value == "1") << what; break;
    case OptionType::Choice:
    case OptionType::Text: EXPECT_EQ(v.text(o.name), o.default_value) << what; break;
    case OptionType::Rate: EXPECT_GT(v.rate(o.name).num, 0) << what; break;
    case OptionType::Size: EXPECT_GT(v.integer(o.name), 0) << what; break;
  }
}

TEST(OptionValues, EveryStageWithNoOptionsGetsItsSchemasDefaults) {
  ASSERT_GE(registered_stages().size(), 7u);
  for (const StageInfo& info : registered_stages()) {
    const OptionValues v = validate_options(info.name, info.options, StageOptions(info.name, {}));
    EXPECT_EQ(v.all().size(), info.options.size()) << info.name << ": every declared option, no other";
    for (const OptionSpec& o : info.options) expect_default(info.name, o, v);
  }
}

TEST(OptionValues, TheStageTextBeatsTheCommandLineWhichBeatsTheSchema) {
  const StageInfo* upscale = find_stage("upscale");
  ASSERT_NE(upscale, nullptr);
  StageOptions options("upscale", {{"tile", "256"}});
  options.set_defaults({{"tile", "128"}, {"batch", "4"}, {"not_an_upscale_option", "x"}});
  const OptionValues v = validate_options("upscale", upscale->options, options);
  EXPECT_EQ(v.integer("tile"), 256);
  EXPECT_TRUE(v.given("tile"));
  EXPECT_EQ(v.integer("batch"), 4);
  EXPECT_TRUE(v.given("batch"));
  EXPECT_EQ(v.integer("tile_batch"), 1);  // the schema's
  EXPECT_FALSE(v.given("tile_batch"));
  EXPECT_EQ(v.all().count("not_an_upscale_option"), 0u);  // another stage's CLI default
}

TEST(OptionValues, ValuesArriveTyped) {
  const StageInfo* interpolate = find_stage("interpolate");
  ASSERT_NE(interpolate, nullptr);
  const OptionValues v = validate_options(
      "interpolate", interpolate->options, StageOptions("interpolate", {{"fps", "59.94"}, {"scene", "0.3"}, {"ensemble", "1"}}));
  EXPECT_EQ(v.rate("fps").num, 60000);
  EXPECT_EQ(v.rate("fps").den, 1001);
  EXPECT_DOUBLE_EQ(v.number("scene"), 0.3);
  EXPECT_TRUE(v.flag("ensemble"));
  const StageInfo* upscale = find_stage("upscale");
  const OptionValues u = validate_options("upscale", upscale->options, StageOptions("upscale", {{"max_memory", "3G"}}));
  EXPECT_EQ(u.integer("max_memory"), int64_t(3) << 30);
  EXPECT_DOUBLE_EQ(u.number("tile"), 0);  // an integer reads as a number too
}

TEST(OptionValues, FlagsTakeTrueAndFalseAsWellAsOneAndZero) {
  const StageInfo* interpolate = find_stage("interpolate");
  ASSERT_NE(interpolate, nullptr);
  for (const auto& [text, on] : std::vector<std::pair<std::string, bool>>{{"1", true}, {"true", true}, {"0", false}, {"false", false}}) {
    const OptionValues v = validate_options("interpolate", interpolate->options, StageOptions("interpolate", {{"ensemble", text}}));
    EXPECT_EQ(v.flag("ensemble"), on) << text;
  }
  EXPECT_THROW(validate_options("interpolate", interpolate->options, StageOptions("interpolate", {{"ensemble", "yes"}})), Error);
}

// A stage reading what its schema does not declare, as the wrong type, or without a value is a
// bug in the stage: a logic_error at once, not a silent fallback.
TEST(OptionValues, ReadingOutsideTheSchemaIsABug) {
  const StageInfo* resize = find_stage("resize");
  ASSERT_NE(resize, nullptr);
  const OptionValues v = validate_options("resize", resize->options, StageOptions("resize", {{"w", "640"}}));
  EXPECT_THROW(v.integer("tile"), std::logic_error);    // resize declares no tile
  EXPECT_THROW(v.has("tile"), std::logic_error);
  EXPECT_THROW(v.text("w"), std::logic_error);          // an integer, not text
  EXPECT_THROW(v.number("scale"), std::logic_error);    // no default, not given
  EXPECT_EQ(v.integer("w"), 640);
  EXPECT_EQ(v.text("algo"), "lanczos");
}

TEST(OptionValues, ABadSchemaDefaultIsCaughtWhereItIsRead) {
  const OptionSchema broken{integer_option("n", "two", 1, 9, "")};
  EXPECT_THROW(validate_options("test", broken, StageOptions("test", {})), std::logic_error);
}

}  // namespace
}  // namespace framelift::pipeline
