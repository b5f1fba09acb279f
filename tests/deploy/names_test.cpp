#include "deploy/names.h"

#include <gtest/gtest.h>

#include <vector>

#include "util/error.h"

namespace framelift::deploy {
namespace {

TEST(DeployNames, SlurmNameKeepsSafeCharacters) {
  EXPECT_EQ(slurm_job_name("/data/jobs/clip_v2.1"), "framelift-clip_v2.1");
  EXPECT_EQ(slurm_job_name("/data/jobs/my clip/"), "framelift-my_clip");
}

TEST(DeployNames, K8sNameIsALabel) {
  EXPECT_EQ(k8s_name("/data/My Clip (final).v2"), "framelift-my-clip-final-v2");
  EXPECT_EQ(k8s_name("/data/__/"), "framelift");
  std::string longest = k8s_name("/data/" + std::string(100, 'a') + "-b");
  EXPECT_EQ(longest.size(), 42u);
  EXPECT_NO_THROW(check_k8s_name(longest));
  EXPECT_NO_THROW(check_k8s_name(k8s_name("/data/x" + std::string(31, 'a') + "------b")));
}

TEST(DeployNames, RejectsBadK8sNames) {
  for (const std::string& bad : std::vector<std::string>{"", "Upper", "-lead", "trail-", "under_score", std::string(43, 'a')})
    EXPECT_THROW(check_k8s_name(bad), Error) << bad;
}

}  // namespace
}  // namespace framelift::deploy
