// Shards split a job's segments into contiguous blocks that cover every segment exactly once.
#include <gtest/gtest.h>

#include <cstdlib>

#include "jobs/shard.h"
#include "util/error.h"

namespace framelift::jobs {
namespace {

TEST(Shard, ShardsCoverEverySegmentOnce) {
  for (int total : {1, 3, 7, 64, 101}) {
    for (int n : {1, 2, 4, 8}) {
      std::vector<int> owners(size_t(total), 0);
      for (int k = 0; k < n; ++k) {
        SegmentSelection s = parse_shard(std::to_string(k) + "/" + std::to_string(n));
        int last = -1;
        for (int i = 0; i < total; ++i) {
          if (!s.includes(i, total)) continue;
          ++owners[size_t(i)];
          if (last >= 0) {
            EXPECT_EQ(i, last + 1) << "shard " << k << "/" << n << " is not contiguous";
          }
          last = i;
        }
      }
      for (int i = 0; i < total; ++i) EXPECT_EQ(owners[size_t(i)], 1) << total << " segments, " << n << " shards, segment " << i;
    }
  }
}

TEST(Shard, RangesAndErrors) {
  SegmentSelection r = parse_segment_range("2-4");
  EXPECT_FALSE(r.includes(1, 10));
  EXPECT_TRUE(r.includes(2, 10));
  EXPECT_TRUE(r.includes(4, 10));
  EXPECT_FALSE(r.includes(5, 10));
  EXPECT_TRUE(parse_segment_range("7").includes(7, 10));
  EXPECT_THROW(parse_segment_range("5-2"), Error);
  EXPECT_THROW(parse_shard("4/4"), Error);
  EXPECT_THROW(parse_shard("1"), Error);
  EXPECT_THROW(parse_shard("x/2"), Error);
}

TEST(Shard, AutoReadsSlurmAndKubernetesIndices) {
  unsetenv("JOB_COMPLETION_INDEX");
  setenv("SLURM_ARRAY_TASK_ID", "12", 1);
  setenv("SLURM_ARRAY_TASK_MIN", "10", 1);
  setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
  SegmentSelection s = parse_shard("auto");
  EXPECT_EQ(s.shard, 2);
  EXPECT_EQ(s.shards, 4);
  unsetenv("SLURM_ARRAY_TASK_ID");
  unsetenv("SLURM_ARRAY_TASK_MIN");
  unsetenv("SLURM_ARRAY_TASK_COUNT");
  setenv("JOB_COMPLETION_INDEX", "3", 1);
  s = parse_shard("auto/5");
  EXPECT_EQ(s.shard, 3);
  EXPECT_EQ(s.shards, 5);
  EXPECT_THROW(parse_shard("auto"), Error) << "Kubernetes does not say N";
  unsetenv("JOB_COMPLETION_INDEX");
  EXPECT_THROW(parse_shard("auto/5"), Error);
}

}  // namespace
}  // namespace framelift::jobs
