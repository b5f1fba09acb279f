// The cost arithmetic and its one-line form. Prices and times are chosen so that no result sits on
// a rounding boundary.
#include "lifecycle/cost_meter.h"

#include <gtest/gtest.h>

#include <cmath>

#include "lifecycle/lifecycle_options.h"
#include "util/error.h"

using namespace framelift::lifecycle;
using namespace std::chrono_literals;

namespace {

TEST(CostMeter, SpentIsPriceTimesHoursAndTotalIsSpentOverFraction) {
  auto e = estimate_cost(2.0, 1800, 0, 0.25);
  EXPECT_DOUBLE_EQ(e.spent_usd, 1.0);
  ASSERT_TRUE(e.total_usd);
  EXPECT_DOUBLE_EQ(*e.total_usd, 4.0);
}

TEST(CostMeter, EarlierRunsCountInSpentAndProjection) {
  // 15 min now + 45 min in earlier runs at $2/h = $2 for half the job.
  auto e = estimate_cost(2.0, 900, 2700, 0.5);
  EXPECT_DOUBLE_EQ(e.spent_usd, 2.0);
  EXPECT_DOUBLE_EQ(*e.total_usd, 4.0);
}

TEST(CostMeter, NoProgressMeansNoProjection) {
  EXPECT_FALSE(estimate_cost(1.0, 60, 0, 0).total_usd);
  EXPECT_FALSE(estimate_cost(1.0, 60, 0, -0.5).total_usd);
  EXPECT_FALSE(estimate_cost(1.0, 60, 0, std::nan("")).total_usd);
}

TEST(CostMeter, OutOfRangeInputsAreClamped) {
  auto done = estimate_cost(3.0, 1200, 0, 1.5);  // past 100%: the total is what was spent
  EXPECT_DOUBLE_EQ(*done.total_usd, done.spent_usd);
  EXPECT_DOUBLE_EQ(estimate_cost(3.0, -100, -5, 0.5).spent_usd, 0.0);
}

TEST(CostMeter, FormatsDollarsAndCents) {
  EXPECT_EQ(format_cost({0.42, 1.37}), "$0.42 spent, ~$1.37 total");
  EXPECT_EQ(format_cost({0.42, std::nullopt}), "$0.42 spent");
  EXPECT_EQ(format_cost({0.0, 0.0}), "$0.00 spent, ~$0.00 total");
  EXPECT_EQ(format_cost({0.0049, 0.0051}), "$0.00 spent, ~$0.01 total");
  EXPECT_EQ(format_cost({1234.5678, 98765.4321}), "$1234.57 spent, ~$98765.43 total");
}

TEST(CostMeter, ClockCountsFromConstructionPlusEarlierRuns) {
  auto start = CostMeter::Clock::time_point{} + 1h;
  CostMeter meter(1.2, 600s, start);  // 10 min already paid in an earlier run
  auto now = start + 20min;
  EXPECT_DOUBLE_EQ(meter.billed_seconds(now), 1800.0);
  EXPECT_DOUBLE_EQ(meter.estimate(0.3, now).spent_usd, 0.6);
  EXPECT_EQ(meter.line(0.3, now), "$0.60 spent, ~$2.00 total");
  EXPECT_EQ(meter.line(0.0, now), "$0.60 spent");
}

TEST(LifecycleOptions, HourlyPriceIsANonNegativeNumber) {
  EXPECT_DOUBLE_EQ(parse_hourly_price("0.79"), 0.79);
  EXPECT_DOUBLE_EQ(parse_hourly_price("$1.5"), 1.5);
  EXPECT_DOUBLE_EQ(parse_hourly_price("0"), 0.0);
  for (const char* bad : {"", "$", "-1", "abc", "1.5/h", "inf", "nan"})
    EXPECT_THROW(parse_hourly_price(bad), framelift::Error) << bad;
}

TEST(LifecycleOptions, WatchProviderNamesRoundTrip) {
  for (const char* name : {"aws", "gcp", "azure", "auto", "off"})
    EXPECT_EQ(watch_provider_name(parse_watch_provider(name)), name);
  try {
    parse_watch_provider("oracle");
    ADD_FAILURE() << "oracle accepted";
  } catch (const framelift::Error& e) {
    EXPECT_EQ(e.kind(), framelift::ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("--watch-preemption"), std::string::npos);
  }
}

}  // namespace
