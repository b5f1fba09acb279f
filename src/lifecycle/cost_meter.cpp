#include "lifecycle/cost_meter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace framelift::lifecycle {
namespace {

std::string dollars(double usd) {
  // Whole cents first, so that 0.005 shows as $0.01 and never as $0.00 or "-0.00".
  double cents = std::floor(std::max(usd, 0.0) * 100 + 0.5);
  char text[48];
  std::snprintf(text, sizeof text, "$%.2f", cents / 100);
  return text;
}

}  // namespace

CostEstimate estimate_cost(double hourly_usd, double seconds_this_run, double seconds_before, double fraction_done) {
  CostEstimate estimate;
  double seconds = std::max(seconds_this_run, 0.0) + std::max(seconds_before, 0.0);
  estimate.spent_usd = std::max(hourly_usd, 0.0) * seconds / 3600.0;
  if (fraction_done > 0) estimate.total_usd = estimate.spent_usd / std::min(fraction_done, 1.0);
  return estimate;
}

std::string format_cost(const CostEstimate& estimate) {
  std::string text = dollars(estimate.spent_usd) + " spent";
  if (estimate.total_usd) text += ", ~" + dollars(*estimate.total_usd) + " total";
  return text;
}

CostMeter::CostMeter(double hourly_usd, std::chrono::duration<double> before, Clock::time_point start)
    : hourly_usd_(hourly_usd), before_seconds_(before.count()), start_(start) {}

double CostMeter::billed_seconds(Clock::time_point now) const {
  return std::max(std::chrono::duration<double>(now - start_).count(), 0.0) + std::max(before_seconds_, 0.0);
}

CostEstimate CostMeter::estimate(double fraction_done, Clock::time_point now) const {
  return estimate_cost(hourly_usd_, std::chrono::duration<double>(now - start_).count(), before_seconds_, fraction_done);
}

}  // namespace framelift::lifecycle
