// Issue 29, through `framelift serve`: the server is stopped while it runs a job, at each early
// point of the job (tests/support/early_stops.h), by SIGKILL and by SIGTERM, delivered at that
// point by the server process itself (FRAMELIFT_CRASH_AT, FRAMELIFT_STOP_AT: util/crash_point.h).
// SIGTERM requeues the job and exits 0; SIGKILL leaves it "running" in the database. A server
// started again on the same data folder resumes it, and the output holds every frame of one plain
// `framelift run --no-job` of the same request (FFV1, md5 per frame).
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "server/server_process.h"
#include "server/server_site.h"
#include "support/early_stops.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

std::string tiny_job_body() {
  return json{{"input", "clips/tiny.mkv"}, {"output", "out.mkv"}, {"pipeline", kEarlyStopPipeline}, {"codec", "ffv1"},
              {"segment_frames", kEarlyStopSegmentFrames}}
      .dump();
}

std::vector<FrameHash> one_pass(const Site& site) {
  const fs::path out = site.dir / "one-pass.mkv";
  const CliResult r = framelift("run -i " + shell_quote(site.media / "clips" / "tiny.mkv") + " -o " + shell_quote(out) +
                                " --pipeline " + kEarlyStopPipeline + " -c ffv1 --no-job --progress none");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return framemd5(out, "0:v", false);
}

bool has_event(httplib::Client& c, const std::string& token, int64_t id, const std::string& kind) {
  const json events = json::parse(c.Get("/api/jobs/" + std::to_string(id) + "/events", bearer(token))->body);
  for (const json& e : events["events"])
    if (e["kind"] == kind) return true;
  return false;
}

class ServeEarlyStops : public ::testing::TestWithParam<EarlyStop> {};

TEST_P(ServeEarlyStops, StoppedThereThenARestartResumesEveryFrame) {
  const auto& [point, signal] = GetParam();
  Site site;
  fs::copy_file(media("tiny_20f.mkv"), site.media / "clips" / "tiny.mkv");
  const std::string token = site.token("alice");
  const std::vector<FrameHash> want = one_pass(site);
  ASSERT_EQ(want.size(), size_t(kEarlyStopFrames));
  const std::string what = signal_name(signal) + " at " + point.at + " (" + point.what + ")";
  int64_t id = -1;
  {
    ServerProcess server(site.args(), site.dir / "stopped.log", {{stop_variable(signal), point.at}});
    ASSERT_FALSE(server.url().empty()) << server.log();
    auto c = client(server);
    id = submit(*c, token, tiny_job_body());
    const int rc = server.wait_for_exit(60);
    EXPECT_EQ(rc, signal == StopSignal::Kill ? 128 + 9 : 0) << "the point was not reached: " << server.log();
    if (signal == StopSignal::Term) {
      EXPECT_NE(server.log().find("requeued: the server is stopping"), std::string::npos) << server.log();
    }
  }
  const fs::path out = site.data / "outputs" / std::to_string(id) / "out.mkv";
  EXPECT_FALSE(fs::exists(out)) << "nothing may appear under the output's name before it is complete";
  ServerProcess again(site.args(), site.dir / "restarted.log");
  ASSERT_FALSE(again.url().empty()) << again.log();
  auto c = client(again);
  const json done = wait_until_finished(*c, token, id, 60);
  ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << again.log();
  EXPECT_TRUE(has_event(*c, token, id, "requeued")) << "the job finished before the stop: the point came too late";
  const std::vector<FrameHash> got = framemd5(out, "0:v", false);
  ASSERT_EQ(got.size(), want.size()) << what << ": frames lost or added\n" << again.log();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i].md5, want[i].md5) << what << ": frame " << i;
  EXPECT_EQ(done["progress"]["frames"], kEarlyStopFrames) << done.dump();
  EXPECT_EQ(done["progress"]["total"], kEarlyStopFrames) << done.dump();
}

INSTANTIATE_TEST_SUITE_P(Points, ServeEarlyStops,
                         ::testing::Combine(::testing::ValuesIn(early_points()), ::testing::Values(StopSignal::Kill, StopSignal::Term)),
                         [](const auto& info) { return early_stop_name(info); });

}  // namespace
}  // namespace framelift::test
