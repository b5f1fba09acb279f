// Segment claims between workers: exactly one winner, stale claims taken over (no heartbeat, or a
// dead process on this machine), and a worker that was taken over knows it.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "jobs/claims.h"
#include "support/test_paths.h"

namespace framelift::jobs {
namespace {

JobDir make_dir(const std::string& tag) {
  JobDir dir(test::temp_dir(tag) / "job");
  dir.create();
  return dir;
}

void age_file(const std::filesystem::path& p, int seconds) {
  struct timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= seconds;
  times[1] = times[0];
  ASSERT_EQ(utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
}

TEST(Claims, OneWinnerPerSegmentAmongManyThreads) {
  JobDir dir = make_dir("claims-race");
  constexpr int kWorkers = 4, kSegments = 200;
  std::vector<std::vector<int>> won(kWorkers);
  std::vector<std::thread> threads;
  std::atomic<bool> go{false};
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      SegmentClaims claims(dir, "host:1:" + std::to_string(w), std::chrono::seconds(60));
      while (!go) std::this_thread::yield();
      for (int i = 0; i < kSegments; ++i)
        if (claims.try_claim(i)) won[w].push_back(i);
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  std::multiset<int> all;
  for (const auto& w : won) all.insert(w.begin(), w.end());
  EXPECT_EQ(all.size(), size_t(kSegments));
  for (int i = 0; i < kSegments; ++i) EXPECT_EQ(all.count(i), 1u) << "segment " << i;
}

TEST(Claims, FreshClaimIsRespectedStaleOneIsTakenOver) {
  JobDir dir = make_dir("claims-stale");
  SegmentClaims a(dir, "elsewhere:1:a", std::chrono::seconds(30));
  SegmentClaims b(dir, "elsewhere:2:b", std::chrono::seconds(30));
  ASSERT_TRUE(a.try_claim(3));
  EXPECT_FALSE(b.try_claim(3));
  EXPECT_EQ(b.holder(3), "elsewhere:1:a");
  age_file(dir.claim_file(3), 31);  // a stopped sending heartbeats
  EXPECT_TRUE(b.try_claim(3));
  EXPECT_TRUE(b.holds(3));
  EXPECT_FALSE(a.holds(3)) << "a must learn that it lost the segment";
  a.release(3);  // a's release must not remove b's claim... a no longer holds it in its own set
  EXPECT_TRUE(b.holds(3));
}

TEST(Claims, HeartbeatKeepsAClaimAlive) {
  JobDir dir = make_dir("claims-heartbeat");
  SegmentClaims a(dir, "elsewhere:1:a", std::chrono::seconds(30));
  SegmentClaims b(dir, "elsewhere:2:b", std::chrono::seconds(30));
  ASSERT_TRUE(a.try_claim(0));
  age_file(dir.claim_file(0), 31);
  a.heartbeat();
  EXPECT_FALSE(b.try_claim(0));
}

TEST(Claims, ClaimOfADeadProcessOnThisMachineIsStaleAtOnce) {
  JobDir dir = make_dir("claims-dead");
  const pid_t child = fork();
  if (child == 0) {
    SegmentClaims c(dir, make_worker_id(), std::chrono::seconds(3600));
    _exit(c.try_claim(5) ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  SegmentClaims me(dir, make_worker_id(), std::chrono::seconds(3600));
  EXPECT_TRUE(me.try_claim(5)) << "the child is gone; its claim must not wait out an hour";
  SegmentClaims other(dir, make_worker_id(), std::chrono::seconds(3600));
  EXPECT_FALSE(other.try_claim(5)) << "this process is alive";
}

TEST(Claims, ReleaseFreesTheSegment) {
  JobDir dir = make_dir("claims-release");
  SegmentClaims a(dir, "h:1:a", std::chrono::seconds(30)), b(dir, "h:2:b", std::chrono::seconds(30));
  ASSERT_TRUE(a.try_claim(1));
  a.release(1);
  EXPECT_TRUE(b.try_claim(1));
}

}  // namespace
}  // namespace framelift::jobs
