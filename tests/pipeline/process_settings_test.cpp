// Process-wide settings are made once by whoever runs a pipeline, never by a stage (issue 28,
// item 4). Stage constructors used to call configure_cpu_threads and set memory budgets, so a
// stage built later undid an earlier one: "upscale:threads=2,interpolate" ran on every CPU.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include "infer/memory_budget.h"
#include "infer/threads.h"
#include "pipeline/process_settings.h"
#include "pipeline/stage_registry.h"
#include "support/test_paths.h"

namespace framelift::pipeline {
namespace {

std::string compact_x2() {
  return (test::npm_package("waifu2x") / "real-esrgan/models/realesr-animevideov3-x2.param").string();
}

TEST(ProcessSettings, TheMostThreadsAndTheTightestBudgetOfTheCpuStages) {
  const ProcessSettings s = process_settings(
      "upscale:threads=2:device=cpu:max_memory=64M,resize:scale=2,upscale:threads=3:device=cpu:max_memory=32M,"
      "interpolate:device=cpu",
      {});
  EXPECT_EQ(s.cpu_threads, 3);
  EXPECT_EQ(s.cpu_memory_budget, int64_t(32) << 20);
  EXPECT_TRUE(s.device_memory_limits.empty());
  // The command line's --threads is a default like any other; the stage text wins.
  EXPECT_EQ(process_settings("upscale:device=cpu", {{"threads", "1"}}).cpu_threads, 1);
  EXPECT_EQ(process_settings("upscale:device=cpu:threads=2", {{"threads", "1"}}).cpu_threads, 2);
  EXPECT_EQ(process_settings("resize:scale=2", {{"threads", "1"}}).cpu_threads, 0) << "resize declares no threads";
}

TEST(ProcessSettings, BuildingStagesChangesNoProcessWideState) {
  if (!std::filesystem::exists(compact_x2())) GTEST_SKIP() << compact_x2() << " missing; run scripts/setup.sh";
  apply(ProcessSettings{2, 0, {}});
  ASSERT_EQ(at::get_num_threads(), std::min(2, infer::usable_cpu_count()));
  const int64_t budget = infer::cpu_memory_budget();
  auto stages = make_stages("upscale:model=" + compact_x2() + ":device=cpu:threads=1:max_memory=48M");
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(at::get_num_threads(), std::min(2, infer::usable_cpu_count())) << "the stage set the thread count";
  EXPECT_EQ(infer::cpu_memory_budget(), budget) << "the stage set the memory budget";
  apply(process_settings("upscale:model=" + compact_x2() + ":device=cpu:threads=1", {}));
  EXPECT_EQ(at::get_num_threads(), 1);
  apply(ProcessSettings{});
  EXPECT_EQ(at::get_num_threads(), infer::usable_cpu_count());
}

}  // namespace
}  // namespace framelift::pipeline
