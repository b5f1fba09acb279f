#include <gtest/gtest.h>

#include "pipeline/stage_spec.h"
#include "util/error.h"

namespace framelift::pipeline {
namespace {

TEST(StageSpec, ParsesChainsInBothSpellings) {
  auto specs = parse_pipeline("resize:scale=2:algo=bicubic, upscale:model=realesr-animevideov3,interpolate:fps=60");
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].name, "resize");
  EXPECT_EQ(specs[0].options.get("algo", ""), "bicubic");
  EXPECT_DOUBLE_EQ(specs[0].options.get_double("scale", 0), 2.0);
  EXPECT_EQ(specs[1].options.get("model", ""), "realesr-animevideov3");
  EXPECT_EQ(specs[2].options.get_int("fps", 0), 60);

  auto continued = parse_pipeline("resize:w=1280,h=720,filter:vf=eq");
  ASSERT_EQ(continued.size(), 2u);
  EXPECT_EQ(continued[0].options.get_int("w", 0), 1280);
  EXPECT_EQ(continued[0].options.get_int("h", 0), 720);
  EXPECT_TRUE(parse_pipeline("").empty());
}

TEST(StageSpec, RejectsMalformedText) {
  EXPECT_THROW(parse_pipeline("scale=2"), Error);          // option before any stage
  EXPECT_THROW(parse_pipeline("resize:scale"), Error);     // option without a value
  auto specs = parse_pipeline("resize:scale=two");
  EXPECT_THROW(specs[0].options.get_double("scale", 0), Error);
  EXPECT_THROW(specs[0].options.expect_only({"w", "h"}), Error);
  try {
    parse_pipeline("resize:w=1.5")[0].options.get_int("w", 0);
    FAIL() << "fractional integer accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("resize"), std::string::npos);
  }
}

}  // namespace
}  // namespace framelift::pipeline
