// Odd stage orders are named in a warning; sensible ones are quiet.
#include <gtest/gtest.h>

#include "pipeline/stage_order.h"

namespace framelift::pipeline {
namespace {

TEST(StageOrder, CleanersAfterEnlargingStagesAreWarnedAbout) {
  EXPECT_TRUE(stage_order_warnings(parse_pipeline("deinterlace,denoise,upscale,interpolate")).empty());
  EXPECT_TRUE(stage_order_warnings(parse_pipeline("resize:scale=0.5,denoise")).empty());
  auto w = stage_order_warnings(parse_pipeline("upscale,denoise:level=1"));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("denoise after upscale"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("put denoise first"), std::string::npos) << w[0];
  EXPECT_EQ(stage_order_warnings(parse_pipeline("interpolate,deinterlace,denoise")).size(), 2u);
}

}  // namespace
}  // namespace framelift::pipeline
