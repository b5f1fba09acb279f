// The host memory tracker counts libtorch's CPU allocations and enforces --max-memory.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "infer/memory_budget.h"

namespace framelift::infer {
namespace {

constexpr int64_t kMiB = 1 << 20;

struct BudgetGuard {
  ~BudgetGuard() { set_cpu_memory_budget(0); }
};

TEST(MemoryBudget, CountsLiveTensorsAndPeak) {
  install_cpu_memory_tracker();
  const int64_t before = cpu_memory_in_use();
  reset_cpu_memory_peak();
  {
    at::Tensor t = at::empty({16 * kMiB / 4}, at::kFloat);  // 16 MiB
    EXPECT_GE(cpu_memory_in_use() - before, 16 * kMiB);
  }
  EXPECT_LT(cpu_memory_in_use() - before, kMiB);  // freed
  EXPECT_GE(cpu_memory_peak() - before, 16 * kMiB);
}

TEST(MemoryBudget, RefusesAnAllocationOverBudgetWithOutOfMemory) {
  BudgetGuard guard;
  install_cpu_memory_tracker();
  set_cpu_memory_budget(cpu_memory_in_use() + 8 * kMiB);
  at::Tensor small = at::ones({kMiB / 4});  // 1 MiB fits
  try {
    at::Tensor big = at::empty({64 * kMiB / 4});
    FAIL() << "a 64 MiB tensor was allowed under an 8 MiB budget";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(std::string(e.what()).rfind("out of memory", 0), 0u) << e.what();
    EXPECT_EQ(e.kind(), ErrorKind::Resource);
  }
  // A refused allocation leaves the accounting as it was; the budget lifted, it works.
  set_cpu_memory_budget(0);
  at::Tensor big = at::empty({64 * kMiB / 4});
  EXPECT_EQ(small.sum().item<float>(), float(kMiB / 4));
}

TEST(MemoryBudget, OpsThatAllocateInsideLibtorchAreCounted) {
  install_cpu_memory_tracker();
  at::Tensor x = at::rand({1, 16, 128, 128});
  at::Tensor w = at::rand({16, 16, 3, 3});
  const int64_t before = cpu_memory_in_use();
  reset_cpu_memory_peak();
  at::Tensor y = at::conv2d(x, w, {}, 1, 1);  // the output alone is 1 MiB
  EXPECT_GE(cpu_memory_peak() - before, kMiB);
}

TEST(MemoryBudget, LargeBlocksAreReusedInsteadOfFreed) {
  install_cpu_memory_tracker();
  void* first = nullptr;
  {
    at::Tensor t = at::empty({8 * kMiB / 4});
    first = t.data_ptr();
  }
  EXPECT_GE(cpu_memory_cached(), 8 * kMiB);
  at::Tensor again = at::empty({8 * kMiB / 4});
  EXPECT_EQ(again.data_ptr(), first);  // the same pages: no page faults, no zeroing by the kernel
  again.fill_(1);
  EXPECT_EQ(again.sum().item<float>(), float(2 * kMiB));
  EXPECT_GE(release_cached_cpu_memory(), 0);
  EXPECT_EQ(cpu_memory_cached(), 0);
}

TEST(MemoryBudget, ParsesSizes) {
  EXPECT_EQ(parse_byte_size("512M"), 512 * kMiB);
  EXPECT_EQ(parse_byte_size("2G"), 2048 * kMiB);
  EXPECT_EQ(parse_byte_size("1.5GiB"), 1536 * kMiB);
  EXPECT_EQ(parse_byte_size("4096"), 4096);
  EXPECT_EQ(parse_byte_size("64kb"), 64 * 1024);
  for (const char* bad : {"", "G", "-1G", "12X", "1e999"}) EXPECT_THROW(parse_byte_size(bad), Error) << bad;
}

TEST(MemoryBudget, KnowsTheMemoryLeft) { EXPECT_GT(available_host_memory(), 64 * kMiB); }

}  // namespace
}  // namespace framelift::infer
