// framelift serve against a real server process on loopback: tokens refused and accepted, paths
// outside the media roots refused, a job to completion whose output equals `framelift run`'s,
// users kept apart, a server killed with SIGKILL mid-job resuming it on restart, HTTPS and the
// loopback rule.
#include <gtest/gtest.h>
#include <httplib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "server/server_process.h"
#include "server/server_site.h"
#include "support/media_check.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// What `framelift run` makes of the same request: the reference the server's output must equal.
std::vector<FrameHash> reference_frames(const Site& site) {
  const fs::path out = site.dir / "reference.mkv";
  if (!fs::exists(out)) {
    auto r = framelift("run -i " + shell_quote(site.media / "clips" / "cfr.mkv") + " -o " + shell_quote(out) +
                       " --pipeline resize:scale=0.5 -c ffv1 --progress none");
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  return framemd5(out, "0:v", false);
}

void expect_same_frames(const fs::path& file, const std::vector<FrameHash>& ref) {
  const auto got = framemd5(file, "0:v", false);
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].md5, ref[i].md5) << "frame " << i;
}

TEST(ServeApi, HealthIsOpenAndEverythingElseNeedsAToken) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  auto health = c->Get("/api/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body)["status"], "ok");
  EXPECT_EQ(c->Get("/api/jobs")->status, 401);
  EXPECT_EQ(c->Get("/api/jobs", bearer("flk_" + std::string(64, '0')))->status, 401);
  EXPECT_EQ(c->Post("/api/jobs", job_body(), "application/json")->status, 401);
  auto listed = c->Get("/api/jobs", bearer(token));
  EXPECT_EQ(listed->status, 200);
  EXPECT_EQ(json::parse(listed->body)["jobs"].size(), 0u);
  // The database keeps the token's hash, never the token.
  std::ifstream db(site.data / "server.db", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(db)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.find(token), std::string::npos);
  EXPECT_NE(server.log().find("refused an unknown token from 127.0.0.1"), std::string::npos) << server.log();
}

// Guesses past the limit are answered 429; a known token is never refused for them (all users
// share 127.0.0.1 through `ssh -L`: tests/server/server_hostile_test.cpp has the lockout case).
TEST(ServeApi, RepeatedBadTokensAreRefusedAndAGoodOneStillWorks) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(c->Get("/api/jobs", bearer("guess" + std::to_string(i)))->status, 401);
  EXPECT_EQ(c->Get("/api/jobs", bearer("guess10"))->status, 429);
  EXPECT_EQ(c->Get("/api/jobs", bearer(token))->status, 200);
}

TEST(ServeApi, PathsOutsideTheMediaRootsAreRefused) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  for (const std::string& input : std::vector<std::string>{"../outside/secret.mkv", "clips/../../outside/secret.mkv", "escape/secret.mkv", "clips/s.mkv",
                                  (site.outside / "secret.mkv").string()}) {
    auto r = c->Post("/api/jobs", bearer(token), job_body(input), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << input << ": " << r->body;
  }
  EXPECT_EQ(c->Post("/api/jobs", bearer(token), job_body("clips/none.mkv"), "application/json")->status, 400);
  auto bad_output = c->Post("/api/jobs", bearer(token), json{{"input", "clips/cfr.mkv"}, {"output", "../x.mkv"}}.dump(), "application/json");
  EXPECT_EQ(bad_output->status, 400) << bad_output->body;
  EXPECT_EQ(c->Get("/api/media?path=escape", bearer(token))->status, 403);
  auto listing = c->Get("/api/media?path=clips", bearer(token));
  ASSERT_EQ(listing->status, 200) << listing->body;
  EXPECT_EQ(json::parse(listing->body)["entries"][0]["name"], "cfr.mkv");
  EXPECT_FALSE(fs::exists(site.data / "outputs")) << "no job may have been queued";
}

TEST(ServeApi, AJobRunsToCompletionAndItsOutputDownloadsWithRanges) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const int64_t id = submit(*c, token, job_body());
  const json done = wait_until_finished(*c, token, id);
  ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << server.log();
  EXPECT_EQ(done["progress"]["frames"], 50);
  EXPECT_DOUBLE_EQ(done["progress"]["percent"].get<double>(), 100.0);

  auto whole = c->Get("/api/jobs/" + std::to_string(id) + "/output", bearer(token));
  ASSERT_EQ(whole->status, 200);
  const fs::path downloaded = site.dir / "downloaded.mkv";
  std::ofstream(downloaded, std::ios::binary) << whole->body;
  expect_same_frames(downloaded, reference_frames(site));

  httplib::Headers ranged = bearer(token);
  ranged.emplace("Range", "bytes=100-1123");
  auto part = c->Get("/api/jobs/" + std::to_string(id) + "/output", ranged);
  ASSERT_EQ(part->status, 206);
  EXPECT_EQ(part->body, whole->body.substr(100, 1024));
  auto events = json::parse(c->Get("/api/jobs/" + std::to_string(id) + "/events", bearer(token))->body)["events"];
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[0]["kind"], "queued");
  EXPECT_EQ(events[1]["kind"], "started");
}

TEST(ServeApi, UsersSeeOnlyTheirOwnJobsAndAnAdminSeesAll) {
  Site site;
  const std::string alice = site.token("alice"), bob = site.token("bob"), root = site.token("root", true);
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const int64_t a = submit(*c, alice, job_body());
  const int64_t b = submit(*c, bob, job_body());
  wait_until_finished(*c, alice, a);
  wait_until_finished(*c, bob, b);
  const std::string path = "/api/jobs/" + std::to_string(a);
  EXPECT_EQ(c->Get(path, bearer(bob))->status, 404);
  EXPECT_EQ(c->Get(path + "/output", bearer(bob))->status, 404);
  EXPECT_EQ(c->Post(path + "/cancel", bearer(bob), "", "application/json")->status, 404);
  EXPECT_EQ(c->Get(path, bearer(root))->status, 200);
  auto ids = [&](const std::string& token) {
    std::vector<int64_t> out;
    const json listed = json::parse(c->Get("/api/jobs", bearer(token))->body);
    for (const json& j : listed["jobs"]) out.push_back(j["id"]);
    return out;
  };
  EXPECT_EQ(ids(alice), std::vector<int64_t>{a});
  EXPECT_EQ(ids(bob), std::vector<int64_t>{b});
  EXPECT_EQ(ids(root), (std::vector<int64_t>{b, a}));
}

// FRAMELIFT_CRASH_AT kills the server with SIGKILL when its job commits its sixth file (the plan,
// job.json, then segment and journal record alternate: two segments done). The restarted server
// finds the job running in its database, requeues it and resumes it from its job folder.
TEST(ServeApi, AServerKilledMidJobResumesItOnRestart) {
  Site site;
  const std::string token = site.token("alice");
  int64_t id = -1;
  {
    ServerProcess server(site.args(), site.dir / "server-1.log", {{"FRAMELIFT_CRASH_AT", "commit:6"}});
    ASSERT_FALSE(server.url().empty()) << server.log();
    auto c = client(server);
    id = submit(*c, token, job_body());
    for (int i = 0; i < 600 && fs::exists(site.dir / "server-1.log"); ++i) {
      if (!c->Get("/api/health")) break;  // it died
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(server.stop(SIGTERM), 128 + SIGKILL) << "the crash point was not reached: " << server.log();
  }
  ASSERT_TRUE(fs::exists(site.data / "jobs" / std::to_string(id))) << "the job folder keeps the finished segments";
  ServerProcess again(site.args(), site.dir / "server-2.log");
  ASSERT_FALSE(again.url().empty()) << again.log();
  auto c = client(again);
  const json done = wait_until_finished(*c, token, id);
  ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << again.log();
  EXPECT_NE(again.log().find("1 job(s) were running when the server stopped"), std::string::npos) << again.log();
  bool requeued = false;
  const json events = json::parse(c->Get("/api/jobs/" + std::to_string(id) + "/events", bearer(token))->body);
  for (const json& e : events["events"])
    requeued = requeued || e["kind"] == "requeued";
  EXPECT_TRUE(requeued);
  expect_same_frames(site.data / "outputs" / std::to_string(id) / "out.mkv", reference_frames(site));
}

// A slow job (FFmpeg's nlmeans, about 0.1-0.3 s a frame here) leaves time to act on it mid-run.
std::string slow_job_body() {
  return json{{"input", "clips/cfr.mkv"}, {"output", "slow.mkv"}, {"pipeline", "filter:graph=nlmeans"}, {"codec", "ffv1"},
              {"segment_frames", 5}, {"max_frames", 20}}.dump();
}

json wait_until_running(httplib::Client& c, const std::string& token, int64_t id) {
  json j;
  for (int i = 0; i < 600; ++i) {
    auto r = c.Get("/api/jobs/" + std::to_string(id), bearer(token));
    if (r && r->status == 200) {
      j = json::parse(r->body);
      if (j["state"] == "running" && j["progress"]["frames"].get<int64_t>() > 0) return j;
      if (j["state"] != "queued" && j["state"] != "running") break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << "job " << id << " never ran: " << j.dump();
  return j;
}

TEST(ServeApi, CancelRetryAndTheLimitsOnJobsAndBodies) {
  Site site;
  const std::string token = site.token("alice");
  std::vector<std::string> args = site.args();
  args.insert(args.end(), {"--max-jobs-per-user", "2"});
  ServerProcess server(args, site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const int64_t running = submit(*c, token, slow_job_body());
  wait_until_running(*c, token, running);
  const int64_t queued = submit(*c, token, job_body());  // behind it: one worker slot
  auto third = c->Post("/api/jobs", bearer(token), job_body(), "application/json");
  EXPECT_EQ(third->status, 429) << third->body;
  EXPECT_EQ(c->Post("/api/jobs", bearer(token), std::string(1100000, ' '), "application/json")->status, 413);

  EXPECT_EQ(c->Post("/api/jobs/" + std::to_string(queued) + "/cancel", bearer(token), "", "application/json")->status, 202);
  EXPECT_EQ(json::parse(c->Get("/api/jobs/" + std::to_string(queued), bearer(token))->body)["state"], "cancelled");
  EXPECT_EQ(c->Post("/api/jobs/" + std::to_string(running) + "/cancel", bearer(token), "", "application/json")->status, 202);
  const json cancelled = wait_until_finished(*c, token, running);
  EXPECT_EQ(cancelled["state"], "cancelled") << cancelled.dump();
  EXPECT_LT(cancelled["progress"]["frames"].get<int64_t>(), 20) << "the cancel must stop it before its end";
  EXPECT_FALSE(fs::exists(site.data / "outputs" / std::to_string(running) / "slow.mkv"));

  // A retry resumes from the job folder and finishes.
  EXPECT_EQ(c->Post("/api/jobs/" + std::to_string(running) + "/retry", bearer(token), "", "application/json")->status, 202);
  const json done = wait_until_finished(*c, token, running);
  ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << server.log();
  EXPECT_EQ(count_frames(site.data / "outputs" / std::to_string(running) / "slow.mkv"), 20);
  EXPECT_EQ(c->Post("/api/jobs/" + std::to_string(running) + "/cancel", bearer(token), "", "application/json")->status, 409);
}

// SIGTERM (a reclaimed instance's notice, an admin's restart) stops the running job within a frame
// and puts it back in the queue; the next server finishes it.
TEST(ServeApi, SigtermRequeuesTheRunningJobAndTheNextServerFinishesIt) {
  Site site;
  const std::string token = site.token("alice");
  int64_t id = -1;
  {
    ServerProcess server(site.args(), site.dir / "server-1.log");
    ASSERT_FALSE(server.url().empty()) << server.log();
    auto c = client(server);
    id = submit(*c, token, slow_job_body());
    wait_until_running(*c, token, id);
    EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
    EXPECT_NE(server.log().find("requeued: the server is stopping"), std::string::npos) << server.log();
  }
  ServerProcess again(site.args(), site.dir / "server-2.log");
  ASSERT_FALSE(again.url().empty()) << again.log();
  auto c = client(again);
  const json done = wait_until_finished(*c, token, id);
  ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << again.log();
  EXPECT_EQ(count_frames(site.data / "outputs" / std::to_string(id) / "slow.mkv"), 20);
  const json events = json::parse(c->Get("/api/jobs/" + std::to_string(id) + "/events", bearer(token))->body);
  int requeued = 0;
  for (const json& e : events["events"]) requeued += e["kind"] == "requeued";
  EXPECT_EQ(requeued, 1) << events.dump();
}

// The page's session: a login with a token sets an HttpOnly, SameSite=Strict cookie; requests on
// the cookie that change anything need the session's CSRF token; logging out ends it.
TEST(ServeApi, ThePageLogsInWithACookieAndChangesNeedItsCsrfToken) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  auto page = c->Get("/");
  ASSERT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<title>framelift</title>"), std::string::npos);
  EXPECT_EQ(page->body.find("http://"), std::string::npos) << "nothing from elsewhere";
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("frame-ancestors 'none'"), std::string::npos);

  EXPECT_EQ(c->Post("/api/login", json{{"token", "flk_wrong"}}.dump(), "application/json")->status, 401);
  auto login = c->Post("/api/login", json{{"token", token}}.dump(), "application/json");
  ASSERT_EQ(login->status, 200) << login->body;
  const std::string set_cookie = login->get_header_value("Set-Cookie");
  for (const char* attribute : {"HttpOnly", "SameSite=Strict", "Path=/"}) EXPECT_NE(set_cookie.find(attribute), std::string::npos) << set_cookie;
  const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
  const std::string csrf = json::parse(login->body)["csrf"];
  EXPECT_EQ(json::parse(login->body)["user"], "alice");

  httplib::Headers session = {{"Cookie", cookie}};
  EXPECT_EQ(c->Get("/api/jobs", session)->status, 200);
  EXPECT_EQ(json::parse(c->Get("/api/session", session)->body)["csrf"], csrf);
  auto forged = c->Post("/api/jobs", session, job_body(), "application/json");
  EXPECT_EQ(forged->status, 403) << forged->body;
  httplib::Headers with_csrf = {{"Cookie", cookie}, {"X-CSRF-Token", csrf}};
  auto wrong_csrf = c->Post("/api/jobs", {{"Cookie", cookie}, {"X-CSRF-Token", std::string(64, 'a')}}, job_body(), "application/json");
  EXPECT_EQ(wrong_csrf->status, 403);
  auto created = c->Post("/api/jobs", with_csrf, job_body(), "application/json");
  ASSERT_EQ(created->status, 201) << created->body;
  const int64_t id = json::parse(created->body)["id"];

  // Live progress: server-sent events until the job ends, the last one its end.
  std::string stream;
  auto streamed = c->Get("/api/jobs/" + std::to_string(id) + "/stream", session, [&](const char* data, size_t n) {
    stream.append(data, n);
    return true;
  });
  ASSERT_TRUE(streamed);
  EXPECT_EQ(streamed->get_header_value("Content-Type"), "text/event-stream");
  std::vector<json> events;
  for (size_t at = 0; (at = stream.find("data: ", at)) != std::string::npos; at += 6)
    events.push_back(json::parse(stream.substr(at + 6, stream.find("\n\n", at) - at - 6)));
  ASSERT_GE(events.size(), 1u) << stream;
  EXPECT_EQ(events.back()["state"], "done") << stream;
  EXPECT_EQ(events.back()["progress"]["frames"], 50);

  auto stages = json::parse(c->Get("/api/stages", session)->body)["stages"];
  bool upscale = false;
  for (const json& st : stages) upscale = upscale || st["name"] == "upscale";
  EXPECT_TRUE(upscale) << stages.dump();
  auto plan = c->Post("/api/plan", with_csrf, json{{"input", "clips/cfr.mkv"}, {"pipeline", "resize:scale=2"}}.dump(), "application/json");
  ASSERT_EQ(plan->status, 200) << plan->body;
  EXPECT_FALSE(json::parse(plan->body)["rows"].empty());
  EXPECT_EQ(c->Post("/api/plan", with_csrf, json{{"input", "../outside/secret.mkv"}}.dump(), "application/json")->status, 403);

  EXPECT_EQ(c->Post("/api/logout", with_csrf, "", "application/json")->status, 200);
  EXPECT_EQ(c->Get("/api/jobs", session)->status, 401) << "the session ended";
}

// rgb24 bytes of a picture or of a video's first frame, through the ffmpeg CLI (test side only).
std::string rgb24(const fs::path& file, const fs::path& raw) {
  EXPECT_EQ(run_command("ffmpeg -v error -y -i " + shell_quote(file) + " -frames:v 1 -f rawvideo -pix_fmt rgb24 " + shell_quote(raw)), 0);
  std::ifstream in(raw, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The before/after preview: left half the input (bicubic to the output's size: here the same),
// right half the pipeline's output. With `negate` the right half is 255 minus the input.
TEST(ServeApi, ThePreviewShowsTheInputLeftAndThePipelineRight) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  auto r = c->Post("/api/preview", bearer(token), json{{"input", "clips/cfr.mkv"}, {"pipeline", "filter:graph=negate"}}.dump(), "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "image/png");
  const fs::path png = site.dir / "preview.png";
  std::ofstream(png, std::ios::binary) << r->body;
  const std::string got = rgb24(png, site.dir / "preview.rgb"), src = rgb24(site.media / "clips" / "cfr.mkv", site.dir / "src.rgb");
  ASSERT_EQ(got.size(), src.size()) << "the preview has the output's size (320x240 here)";
  const int w = 320, h = 240;
  double left = 0, right = 0;
  int n = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w / 4; ++x, ++n)
      for (int ch = 0; ch < 3; ++ch) {
        const auto at = [&](const std::string& img, int xx) { return int(uint8_t(img[(size_t(y) * w + xx) * 3 + ch])); };
        left += std::abs(at(got, x) - at(src, x));
        right += std::abs(at(got, w - 1 - x) - (255 - at(src, w - 1 - x)));
      }
  EXPECT_LT(left / (3 * n), 3.0) << "the left half is the input";
  EXPECT_LT(right / (3 * n), 3.0) << "the right half is the input negated";
  EXPECT_EQ(c->Post("/api/preview", bearer(token), json{{"input", "clips/cfr.mkv"}, {"pipeline", "resize:scale=nan"}}.dump(), "application/json")->status, 400);
  EXPECT_EQ(c->Post("/api/preview", bearer(token), json{{"input", "escape/secret.mkv"}}.dump(), "application/json")->status, 403);
}

// A PUT that announces `length` bytes of body but sends only `sent` of them, then hangs up: a
// connection cut midway through a chunk.
void cut_put(int port, const std::string& path, const std::string& token, const std::string& range, size_t length, const std::string& sent) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string head = "PUT " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\nContent-Range: " + range +
                           "\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
  ASSERT_EQ(send(fd, head.data(), head.size(), 0), ssize_t(head.size()));
  ASSERT_EQ(send(fd, sent.data(), sent.size(), 0), ssize_t(sent.size()));
  close(fd);
}

// An upload in chunks, cut midway through one, resumed from what the server says arrived, then
// used as a job's input: the job's frames equal `framelift run`'s on the original file.
TEST(ServeApi, AnUploadCutMidwayResumesAndBecomesAJobsInput) {
  Site site;
  const std::string alice = site.token("alice"), bob = site.token("bob");
  std::vector<std::string> args = site.args();
  ServerProcess server(args, site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  std::ifstream in(site.media / "clips" / "cfr.mkv", std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t n = file.size();

  EXPECT_EQ(c->Post("/api/uploads", bearer(alice), json{{"name", "big.mkv"}, {"size", int64_t(1) << 40}}.dump(), "application/json")->status, 413);
  auto created = c->Post("/api/uploads", bearer(alice), json{{"name", "up.mkv"}, {"size", n}}.dump(), "application/json");
  ASSERT_EQ(created->status, 201) << created->body;
  const std::string id = json::parse(created->body)["id"];
  const std::string path = "/api/uploads/" + id;
  auto put = [&](size_t a, size_t b) {
    httplib::Headers h = bearer(alice);
    h.emplace("Content-Range", "bytes " + std::to_string(a) + "-" + std::to_string(b - 1) + "/" + std::to_string(n));
    return c->Put(path.c_str(), h, file.substr(a, b - a), "application/octet-stream");
  };
  const size_t third = n / 3;
  ASSERT_EQ(put(0, third)->status, 200);
  // Out of order: refused with what arrived, nothing written.
  auto skipped = put(2 * third, n);
  EXPECT_EQ(skipped->status, 409);
  EXPECT_EQ(json::parse(skipped->body)["received"], third);
  // Cut midway through the second chunk: not counted.
  cut_put(server.port(), path, alice, "bytes " + std::to_string(third) + "-" + std::to_string(2 * third - 1) + "/" + std::to_string(n),
          third, file.substr(third, third / 2));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto status = json::parse(c->Get(path, bearer(alice))->body);
  EXPECT_EQ(status["received"], third) << status.dump();
  EXPECT_EQ(c->Get(path, bearer(bob))->status, 404) << "another user's upload";
  // A job cannot use it before it is complete.
  EXPECT_EQ(c->Post("/api/jobs", bearer(alice), json{{"upload", id}, {"output", "o.mkv"}}.dump(), "application/json")->status, 409);
  // Resume from there.
  ASSERT_EQ(put(third, 2 * third)->status, 200);
  auto last = put(2 * third, n);
  ASSERT_EQ(last->status, 200);
  EXPECT_TRUE(json::parse(last->body)["complete"].get<bool>());
  EXPECT_EQ(c->Post("/api/jobs", bearer(bob), json{{"upload", id}, {"output", "o.mkv"}}.dump(), "application/json")->status, 404);
  const int64_t job = submit(*c, alice, json{{"upload", id}, {"output", "out.mkv"}, {"pipeline", "resize:scale=0.5"}, {"codec", "ffv1"}}.dump());
  const json done = wait_until_finished(*c, alice, job);
  ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << server.log();
  EXPECT_EQ(done["input"], "upload:" + id);
  expect_same_frames(site.data / "outputs" / std::to_string(job) / "out.mkv", reference_frames(site));
}

TEST(ServeApi, OtherAddressesNeedHttpsAndHttpsServes) {
  Site site;
  const std::string token = site.token("alice");
  auto refused = framelift("serve --listen 0.0.0.0:0 --data " + shell_quote(site.data) + " --media " + shell_quote(site.media));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("--listen 0.0.0.0:0: not a loopback address"), std::string::npos) << refused.output;
  auto no_media = framelift("serve --data " + shell_quote(site.data) + " --media " + shell_quote(site.dir / "none"));
  EXPECT_EQ(no_media.exit_code, 2) << no_media.output;
  EXPECT_NE(no_media.output.find("not a folder"), std::string::npos) << no_media.output;

  const fs::path cert = site.dir / "cert.pem", key = site.dir / "key.pem";
  ASSERT_EQ(run_command("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -keyout " + shell_quote(key) +
                        " -out " + shell_quote(cert) + " 2>/dev/null"),
            0);
  std::vector<std::string> args = site.args();
  args.insert(args.end(), {"--tls-cert", cert.string(), "--tls-key", key.string()});
  ServerProcess server(args, site.dir / "server.log");
  ASSERT_EQ(server.url().rfind("https://127.0.0.1:", 0), 0u) << server.log();
  httplib::SSLClient tls("127.0.0.1", server.port());
  tls.enable_server_certificate_verification(false);  // self-signed for the test
  auto health = tls.Get("/api/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(tls.Get("/api/jobs", bearer(token))->status, 200);
  httplib::Client plain("127.0.0.1", server.port());
  EXPECT_FALSE(plain.Get("/api/health")) << "plain HTTP must not be answered on an HTTPS port";
}

}  // namespace
}  // namespace framelift::test
