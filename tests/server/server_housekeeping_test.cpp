// framelift serve keeping its data folder and itself alive (issue 30, cases 4, 6 and part of 7),
// each on a real server process on loopback: a finished job's folder removed while its output
// and record stay (and swept at the next start when left behind), the per-user upload quota, the
// free space kept on the disk, a second server on the same data folder refused, and a database
// locked by another connection while a job runs (the job fails with the reason, the server stays).
#include <gtest/gtest.h>
#include <httplib.h>
#include <sqlite3.h>
#include <sys/statvfs.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "server/server_process.h"
#include "server/server_site.h"
#include "support/small_disk.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// A job long enough to act on while it runs (nlmeans: about 0.1-0.3 s a frame here).
std::string slow_job_body(int frames, const std::string& graph = "nlmeans") {
  return json{{"input", "clips/cfr.mkv"}, {"output", "slow.mkv"}, {"pipeline", "filter:graph='" + graph + "'"}, {"codec", "ffv1"},
              {"segment_frames", 5}, {"max_frames", frames}}.dump();
}

json job_of(httplib::Client& c, const std::string& token, int64_t id) {
  auto r = c.Get("/api/jobs/" + std::to_string(id), bearer(token));
  return r && r->status == 200 ? json::parse(r->body) : json();
}

// Waits until the job runs and has processed a frame.
bool wait_until_running(httplib::Client& c, const std::string& token, int64_t id) {
  for (int i = 0; i < 1200; ++i) {
    const json j = job_of(c, token, id);
    if (j.is_object() && j["state"] == "running" && j["progress"]["frames"].get<int64_t>() > 0) return true;
    if (j.is_object() && j["state"] != "queued" && j["state"] != "running") return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

int count_events(httplib::Client& c, const std::string& token, int64_t id, const std::string& kind) {
  int n = 0;
  const json events = json::parse(c.Get("/api/jobs/" + std::to_string(id) + "/events", bearer(token))->body);
  for (const json& e : events["events"]) n += e["kind"] == kind;
  return n;
}

// POST /api/uploads; the response.
httplib::Result create_upload(httplib::Client& c, const std::string& token, const std::string& name, int64_t size) {
  return c.Post("/api/uploads", bearer(token), json{{"name", name}, {"size", size}}.dump(), "application/json");
}

httplib::Result put_all(httplib::Client& c, const std::string& token, const std::string& id, const std::string& bytes) {
  httplib::Headers h = bearer(token);
  h.emplace("Content-Range", "bytes 0-" + std::to_string(bytes.size() - 1) + "/" + std::to_string(bytes.size()));
  return c.Put("/api/uploads/" + id, h, bytes, "application/octet-stream");
}

// Running, not a zombie: kill(pid, 0) succeeds on a child that died and was not waited for.
bool alive(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

TEST(ServeHousekeeping, AFinishedJobsFolderGoesAndItsOutputAndRecordStay) {
  Site site;
  const std::string token = site.token("alice");
  int64_t id = -1;
  {
    ServerProcess server(site.args(), site.dir / "server-1.log");
    ASSERT_FALSE(server.url().empty()) << server.log();
    auto c = client(server);
    id = submit(*c, token, job_body());
    const json done = wait_until_finished(*c, token, id);
    ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << server.log();
    EXPECT_FALSE(fs::exists(site.data / "jobs" / std::to_string(id))) << "the segments are the output's second copy";
    EXPECT_TRUE(fs::exists(site.data / "outputs" / std::to_string(id) / "out.mkv"));
    auto out = c->Get("/api/jobs/" + std::to_string(id) + "/output", bearer(token));
    ASSERT_TRUE(out);
    EXPECT_EQ(out->status, 200);
    EXPECT_EQ(out->body.size(), fs::file_size(site.data / "outputs" / std::to_string(id) / "out.mkv"));
    EXPECT_EQ(count_events(*c, token, id, "summary"), 1);
  }
  // A folder a server left behind (it died between the record and the removal) goes at the next start.
  fs::create_directories(site.data / "jobs" / std::to_string(id) / "segments");
  std::ofstream(site.data / "jobs" / std::to_string(id) / "segments" / "00000.mkv") << "left behind";
  fs::create_directories(site.data / "jobs" / "999");  // no such job: not the server's to judge
  ServerProcess again(site.args(), site.dir / "server-2.log");
  ASSERT_FALSE(again.url().empty()) << again.log();
  EXPECT_FALSE(fs::exists(site.data / "jobs" / std::to_string(id)));
  EXPECT_TRUE(fs::exists(site.data / "jobs" / "999"));
  EXPECT_NE(again.log().find("removed the job folders of 1 finished job(s)"), std::string::npos) << again.log();
  auto c = client(again);
  EXPECT_EQ(job_of(*c, token, id)["state"], "done");
}

TEST(ServeHousekeeping, TheUploadQuotaIsPerUserAndKeepsEarlierUploads) {
  Site site;
  const std::string alice = site.token("alice"), bob = site.token("bob");
  std::vector<std::string> args = site.args();
  args.insert(args.end(), {"--max-upload-bytes-per-user", "1000", "--min-free-bytes", "0"});
  ServerProcess server(args, site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  auto first = create_upload(*c, alice, "a.mkv", 600);
  ASSERT_EQ(first->status, 201) << first->body;
  const std::string first_id = json::parse(first->body)["id"];
  ASSERT_EQ(put_all(*c, alice, first_id, std::string(600, 'a'))->status, 200);

  auto over = create_upload(*c, alice, "b.mkv", 500);
  EXPECT_EQ(over->status, 413) << over->body;
  const std::string why = json::parse(over->body)["error"];
  EXPECT_NE(why.find("quota of 1000"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  // The earlier upload is whole, and what is left of the quota can still be used.
  const json kept = json::parse(c->Get("/api/uploads/" + first_id, bearer(alice))->body);
  EXPECT_EQ(kept["complete"], true);
  EXPECT_EQ(fs::file_size(site.data / "uploads" / first_id / "a.mkv"), 600u);
  EXPECT_EQ(create_upload(*c, alice, "c.mkv", 400)->status, 201);
  EXPECT_EQ(create_upload(*c, alice, "d.mkv", 1)->status, 413) << "an upload in progress holds its declared size";
  // Another user has a quota of their own.
  auto other = create_upload(*c, bob, "b.mkv", 900);
  EXPECT_EQ(other->status, 201) << other->body;
}

TEST(ServeHousekeeping, TooLittleFreeDiskRefusesUploadsAndJobsWith507) {
  Site site;
  const std::string token = site.token("alice");
  std::vector<std::string> args = site.args();
  args.insert(args.end(), {"--min-free-bytes", std::to_string(int64_t(1) << 62)});  // more than any disk here
  ServerProcess server(args, site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  auto up = create_upload(*c, token, "a.mkv", 10);
  ASSERT_TRUE(up);
  EXPECT_EQ(up->status, 507) << up->body;
  EXPECT_NE(json::parse(up->body)["error"].get<std::string>().find("--min-free-bytes"), std::string::npos) << up->body;
  auto job = c->Post("/api/jobs", bearer(token), job_body(), "application/json");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->status, 507) << job->body;
  EXPECT_EQ(c->Get("/api/health")->status, 200);
  EXPECT_EQ(json::parse(c->Get("/api/jobs", bearer(token))->body)["jobs"].size(), 0u);
  for (const char* written : {"uploads", "jobs", "outputs"}) EXPECT_FALSE(fs::exists(site.data / written)) << written;
}

// On a real 16 MiB disk: an upload is admitted only when its declared size, plus what the
// uploads in progress are still to send, leaves --min-free-bytes free; refused (507, JSON naming
// the figures) before a byte of it is written, while the upload admitted first completes.
TEST(ServeHousekeeping, AnUploadThatWouldFillTheDiskIsRefusedBeforeAByteIsWritten) {
  SmallDisk disk("serve-disk", 16 << 20);
  if (!disk.available()) GTEST_SKIP() << disk.why();
  Site site;
  site.data = disk.dir() / "data";
  const std::string token = site.token("alice");
  const int64_t keep = 2 << 20;
  std::vector<std::string> args = site.args();
  args.insert(args.end(), {"--min-free-bytes", std::to_string(keep)});
  ServerProcess server(args, site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  auto free_now = [&] {
    struct statvfs s {};
    return ::statvfs(disk.dir().c_str(), &s) == 0 ? int64_t(s.f_bavail) * int64_t(s.f_frsize) : int64_t(-1);
  };
  const int64_t first_size = 8'000'000;
  auto first = create_upload(*c, token, "a.mkv", first_size);
  ASSERT_EQ(first->status, 201) << first->body;
  const std::string first_id = json::parse(first->body)["id"];
  // Alone it would fit; with the first upload's 8 MB still to arrive it would not.
  const int64_t second_size = free_now() - keep - 4'000'000;
  auto second = create_upload(*c, token, "b.mkv", second_size);
  ASSERT_EQ(second->status, 507) << second->body;
  const std::string why = json::parse(second->body)["error"];
  EXPECT_NE(why.find(std::to_string(second_size) + " more and the " + std::to_string(first_size) +
                     " still to arrive for uploads in progress"), std::string::npos) << why;
  EXPECT_NE(why.find("--min-free-bytes"), std::string::npos) << why;
  // The first upload, admitted with its whole size, completes.
  ASSERT_EQ(put_all(*c, token, first_id, std::string(size_t(first_size), 'a'))->status, 200);
  EXPECT_EQ(fs::file_size(site.data / "uploads" / first_id / "a.mkv"), uint64_t(first_size));
  for (const auto& e : fs::directory_iterator(site.data / "uploads"))
    EXPECT_TRUE(e.path().filename() == first_id) << "nothing of the refused upload is written: " << e.path();
  // What is left can be taken by one upload, and then holds no room for another.
  auto third = create_upload(*c, token, "c.mkv", free_now() - keep - (64 << 10));
  EXPECT_EQ(third->status, 201) << third->body;
  EXPECT_EQ(create_upload(*c, token, "d.mkv", 1'000'000)->status, 507);
  // A plan holds the job's disk peak against the data folder's disk, and names no server path.
  auto plan = c->Post("/api/plan", bearer(token), json{{"input", "clips/cfr.mkv"}, {"pipeline", "resize:scale=8"}, {"codec", "ffv1"}}.dump(),
                      "application/json");
  ASSERT_EQ(plan->status, 200) << plan->body;
  const json disk_figures = json::parse(plan->body)["disk"];
  EXPECT_EQ(disk_figures["folder"], "the server's outputs folder");
  EXPECT_NEAR(disk_figures["free_bytes"].get<double>(), double(free_now()), 1 << 20);
  EXPECT_EQ(disk_figures["fits"], false) << "50 lossless frames of 2560x1920 on a disk of 16 MiB";
  EXPECT_EQ(plan->body.find(disk.dir().string()), std::string::npos) << plan->body;
}

TEST(ServeHousekeeping, ASecondServerOnTheSameDataFolderIsRefused) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess first(site.args(), site.dir / "server-1.log");
  ASSERT_FALSE(first.url().empty()) << first.log();
  auto c = client(first);
  const int64_t id = submit(*c, token, slow_job_body(20));
  ASSERT_TRUE(wait_until_running(*c, token, id)) << job_of(*c, token, id).dump() << "\n" << first.log();

  // `timeout`: a second server that is not refused would serve on, and run the job again.
  std::string out;
  std::string command = "timeout 30 '" + cli_path().string() + "' serve --listen 127.0.0.1:0 --data '" + site.data.string() +
                        "' --media '" + site.media.string() + "'";
  const int code = run_command(command, &out);
  EXPECT_EQ(code, 6) << out;
  EXPECT_NE(out.find(site.data.string()), std::string::npos) << out;
  EXPECT_NE(out.find("pid " + std::to_string(first.pid())), std::string::npos) << out;
  EXPECT_EQ(out.find("listening"), std::string::npos) << out;

  const json done = wait_until_finished(*c, token, id, 300);
  EXPECT_EQ(done["state"], "done") << done.dump() << "\n" << first.log();
  EXPECT_EQ(count_events(*c, token, id, "started"), 1) << "the job ran once";
  EXPECT_EQ(count_events(*c, token, id, "requeued"), 0);
}

// An open sqlite3 connection that holds the database's write lock, as an admin's shell or a
// backup might, until release().
class WriteLock {
 public:
  explicit WriteLock(const fs::path& db) {
    EXPECT_EQ(sqlite3_open(db.c_str(), &db_), SQLITE_OK);
    sqlite3_busy_timeout(db_, 10000);  // the server may be writing at this moment
    EXPECT_EQ(sqlite3_exec(db_, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db_);
  }
  ~WriteLock() { release(); }
  void release() {
    if (!db_) return;
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
  }

 private:
  sqlite3* db_ = nullptr;
};

TEST(ServeHousekeeping, ALockedDatabaseFailsTheRunningJobAndTheServerStays) {
  Site site;
  const std::string token = site.token("alice");
  ServerProcess server(site.args(), site.dir / "server.log", {{"FRAMELIFT_SERVE_BUSY_TIMEOUT_MS", "100"}});
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  // Slow enough (nlmeans at 640x360, ten segments of 5 frames) that the lock, not the job's end,
  // stops it.
  const int64_t id = submit(*c, token, slow_job_body(200, "scale=640:360,nlmeans"));
  ASSERT_TRUE(wait_until_running(*c, token, id)) << job_of(*c, token, id).dump() << "\n" << server.log();
  // A job stopped before it finished a segment leaves no folder (there is nothing to resume), so
  // the lock comes once the first segment's journal record is there.
  const fs::path folder = site.data / "jobs" / std::to_string(id);
  auto has_a_record = [&] {
    std::error_code ec;
    return fs::exists(folder / "journal", ec) && !fs::is_empty(folder / "journal", ec);
  };
  for (int i = 0; i < 900 && !has_a_record(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(has_a_record()) << server.log();
  {
    WriteLock lock(site.data / "server.db");
    bool gave_up = false;
    for (int i = 0; i < 300 && !gave_up && alive(server.pid()); ++i) {
      gave_up = server.log().find("cannot record the job's progress") != std::string::npos;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(alive(server.pid())) << "the server died: " << server.log();
    EXPECT_TRUE(gave_up) << server.log();
    // Reads go on under a writer's lock (WAL): the server answers while the job waits to be settled.
    auto health = c->Get("/api/health");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    EXPECT_EQ(job_of(*c, token, id)["state"], "running") << "its end is written once the lock goes";
  }
  const json ended = wait_until_finished(*c, token, id, 120);
  EXPECT_EQ(ended["state"], "failed") << ended.dump() << "\n" << server.log();
  const std::string why = ended.value("error", "");
  EXPECT_NE(why.find("cannot record the job's progress"), std::string::npos) << why;
  EXPECT_NE(why.find("database is locked"), std::string::npos) << why;
  EXPECT_TRUE(alive(server.pid())) << server.log();
  EXPECT_EQ(c->Get("/api/health")->status, 200);
  // The job folder keeps its finished segments: a retry resumes it.
  EXPECT_TRUE(fs::exists(folder)) << server.log();
}

}  // namespace
}  // namespace framelift::test
