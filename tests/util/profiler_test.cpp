#include "util/profiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace framelift {
namespace {

using namespace std::chrono_literals;

double elapsed(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

TEST(Profiler, TimeGoesToTheInnermostSectionAndStagesKeyTheirSections) {
  Profiler p;
  const auto start = std::chrono::steady_clock::now();
  double total = 0;
  {
    ProfileScope scope(&p);
    Section outer("outer");
    std::this_thread::sleep_for(30ms);
    {
      Section inner("inner");
      std::this_thread::sleep_for(50ms);
    }
    {
      StageScope stage(2);
      std::this_thread::sleep_for(20ms);
      Section inference("inference");
      std::this_thread::sleep_for(40ms);
      // A section can be charged outside all stages, as the runner does for colour conversion.
      Section convert("convert", false, 0);
      std::this_thread::sleep_for(10ms);
    }
    total = elapsed(start);
  }
  auto s = p.sections();
  ASSERT_EQ(s.size(), 5u);
  // Sleeps only overshoot, so each section has at least its own sleep...
  EXPECT_GE(s["outer"].seconds, 0.030);
  EXPECT_GE(s["inner"].seconds, 0.050);
  EXPECT_GE(s["2:stage"].seconds, 0.020);
  EXPECT_GE(s["2:inference"].seconds, 0.040);
  EXPECT_GE(s["convert"].seconds, 0.010);
  // ...and nothing is counted twice: the exclusive times add up to the wall time.
  double sum = 0;
  for (const auto& [key, st] : s) {
    sum += st.seconds;
    EXPECT_EQ(st.calls, 1) << key;
  }
  EXPECT_NEAR(sum, total, 0.005);
}

TEST(Profiler, MemoryIsMeasuredOnlyInSectionsThatAskAndTheHighestCallWins) {
  // The probe reports the rise since its previous call; scripted: 100 during the first
  // inference, 300 during the second, 999 while a section that does not ask runs.
  int calls = 0;
  int64_t pending = 0;
  Profiler p([&] {
    ++calls;
    const int64_t v = pending;
    pending = 0;
    return v;
  });
  {
    ProfileScope scope(&p);
    for (int64_t rise : {100, 300}) {
      Section inference("inference", true);
      pending = rise;
    }
    Section encode("encode");
    pending = 999;
  }
  auto s = p.sections();
  EXPECT_EQ(s["inference"].peak_bytes, 300);
  EXPECT_EQ(s["inference"].calls, 2);
  EXPECT_EQ(s["encode"].peak_bytes, 0);
  EXPECT_EQ(calls, 4);  // a fresh start and a reading per measured section
  EXPECT_EQ(s["inference"].spans.size(), 2u);  // kept per call where memory is measured
  EXPECT_TRUE(s["encode"].spans.empty());
}

TEST(Profiler, ThreadsWithoutAProfilerRecordNothingAndWorkIsCounted) {
  Profiler p;
  std::thread other([] {
    Section s("decode");
    count_work("decode.frames", 7);
    EXPECT_FALSE(profiling());
  });
  other.join();
  {
    ProfileScope scope(&p);
    EXPECT_TRUE(profiling());
    for (double px : {640.0 * 480, 1280.0 * 720}) {
      Section s("decode");
      s.add_work(px);
    }
    count_work("decode.frames", 3);
  }
  EXPECT_FALSE(profiling());
  auto s = p.sections();
  EXPECT_EQ(s["decode"].calls, 2);
  EXPECT_EQ(s["decode"].work, 640 * 480 + 1280 * 720);
  EXPECT_EQ(s["decode"].max_work, 1280 * 720);  // the largest single span
  EXPECT_EQ(s["decode.frames"].work, 3);
  EXPECT_EQ(s["decode.frames"].calls, 0);
}

}  // namespace
}  // namespace framelift
