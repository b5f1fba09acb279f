// CPU thread sizing for libtorch.
#include <gtest/gtest.h>
#include <sched.h>

#include <ATen/Parallel.h>

#include "infer/threads.h"

TEST(NcnnThreads, UsableCpuCountIsWithinAffinity) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  int n = framelift::infer::usable_cpu_count();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, CPU_COUNT(&set));
}

TEST(NcnnThreads, ConfigureSetsIntraOpThreads) {
  EXPECT_EQ(framelift::infer::configure_cpu_threads(1), 1);
  EXPECT_EQ(at::get_num_threads(), 1);
  int n = framelift::infer::configure_cpu_threads(0);
  EXPECT_EQ(n, framelift::infer::usable_cpu_count());
  EXPECT_THROW(framelift::infer::configure_cpu_threads(-1), std::exception);
}
