// SVD estimates: the memory knobs lower the peak in the stage they act on, and the ladder stops at
// the first settings that fit.
#include <gtest/gtest.h>

#include "plan/diffusion.h"
#include "plan_test_util.h"
#include "util/error.h"

using namespace framelift::plan;

TEST(Svd, KnobsLowerThePeakOfTheirStage) {
  const PlanCatalog c = PlanCatalog::load_default();
  const Device& d = *c.device("a100-80gb");
  SvdSettings s;
  const auto all = estimate_svd(s, d);
  s.decode_chunk_size = 2;
  const auto chunked = estimate_svd(s, d);
  EXPECT_LT(chunked.stages[2].activations_gb, all.stages[2].activations_gb);
  EXPECT_EQ(chunked.stages[1].activations_gb, all.stages[1].activations_gb);
  s.forward_chunking = true;
  EXPECT_LT(estimate_svd(s, d).stages[1].activations_gb, chunked.stages[1].activations_gb);
  s.offload = "model";
  const auto model = estimate_svd(s, d);
  EXPECT_LT(model.peak_gb, chunked.peak_gb);
  EXPECT_GT(model.seconds, estimate_svd(SvdSettings{}, d).seconds * 0.9);
  s.offload = "sequential";
  EXPECT_LT(estimate_svd(s, d).peak_gb, model.peak_gb);
  EXPECT_TRUE(all.fits);  // 80 GB holds SVD-XT without any of them
}

TEST(Svd, LadderEndsAtTheFirstFit) {
  const PlanCatalog c = PlanCatalog::load_default();
  const auto ladder = svd_settings_ladder(SvdSettings{}, *c.device("rtx3080"));
  ASSERT_FALSE(ladder.empty());
  EXPECT_FALSE(ladder.front().fits);
  EXPECT_TRUE(ladder.back().fits);
  EXPECT_NE(ladder.back().settings.offload, "none");
  for (size_t i = 0; i + 1 < ladder.size(); ++i) EXPECT_FALSE(ladder[i].fits);
}

TEST(Svd, FasterCardsFinishSooner) {
  const PlanCatalog c = PlanCatalog::load_default();
  EXPECT_LT(estimate_svd({}, *c.device("h100")).seconds, estimate_svd({}, *c.device("l4")).seconds);
  EXPECT_THROW(estimate_svd(SvdSettings{.width = 1001}, *c.device("h100")), framelift::Error);
}
