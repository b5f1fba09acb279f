#pragma once
// What a job on a rented GPU has cost so far and will cost in all, from the hourly price the user
// gives (--hourly-price) and the job's progress: "$0.42 spent, ~$1.37 total". The projection is
// spent / fraction done, so it assumes the rest runs at the average speed so far; a resumed job
// counts the seconds of its earlier runs (kept in its journal) in both.
#include <chrono>
#include <optional>
#include <string>

namespace framelift::lifecycle {

struct CostEstimate {
  double spent_usd = 0;
  std::optional<double> total_usd;  // unset until some progress is made
};

// The arithmetic. `fraction_done` is the whole job's, earlier runs included, in [0, 1]; 0 (or
// NaN) gives no projection, values above 1 count as 1. Negative times count as 0.
CostEstimate estimate_cost(double hourly_usd, double seconds_this_run, double seconds_before, double fraction_done);

// "$0.42 spent, ~$1.37 total", or "$0.42 spent" without a projection. Cents, rounded half up.
std::string format_cost(const CostEstimate& estimate);

// The clock for one run: starts at construction.
// Thread-safety: const members from any thread.
class CostMeter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit CostMeter(double hourly_usd, std::chrono::duration<double> before = {},
                     Clock::time_point start = Clock::now());

  // Seconds paid for so far, earlier runs included: what the journal should keep for a resume.
  double billed_seconds(Clock::time_point now = Clock::now()) const;
  CostEstimate estimate(double fraction_done, Clock::time_point now = Clock::now()) const;
  std::string line(double fraction_done, Clock::time_point now = Clock::now()) const {
    return format_cost(estimate(fraction_done, now));
  }

 private:
  double hourly_usd_;
  double before_seconds_;
  Clock::time_point start_;
};

}  // namespace framelift::lifecycle
