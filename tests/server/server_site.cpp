#include "server/server_site.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "cli/cli_runner.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace fs = std::filesystem;
using nlohmann::json;

Site::Site() : dir(temp_dir("serve")), data(dir / "data"), media(dir / "media"), outside(dir / "outside") {
  fs::create_directories(media / "clips");
  fs::create_directories(outside);
  fs::copy_file(test::media("cfr_8bit.mkv"), media / "clips" / "cfr.mkv");
  std::ofstream(outside / "secret.mkv") << "not yours";
  fs::create_symlink(outside, media / "escape");                        // a folder link out of the root
  fs::create_symlink(outside / "secret.mkv", media / "clips" / "s.mkv");  // a file link out of it
}

std::string Site::token(const std::string& user, bool admin) const {
  auto r = framelift("serve token add " + user + " --data " + shell_quote(data) + (admin ? " --admin" : ""));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output.substr(0, r.output.find('\n'));
}

std::vector<std::string> Site::args() const { return {"--listen", "127.0.0.1:0", "--data", data.string(), "--media", media.string()}; }

httplib::Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

std::unique_ptr<httplib::Client> client(const ServerProcess& s) {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", s.port());
  c->set_read_timeout(30, 0);
  return c;
}

std::string job_body(const std::string& input) {
  return json{{"input", input}, {"output", "out.mkv"}, {"pipeline", "resize:scale=0.5"}, {"codec", "ffv1"}, {"segment_frames", 10}}.dump();
}

int64_t submit(httplib::Client& c, const std::string& token, const std::string& body) {
  auto r = c.Post("/api/jobs", bearer(token), body, "application/json");
  EXPECT_TRUE(r);
  if (!r) return -1;
  EXPECT_EQ(r->status, 201) << r->body;
  return json::parse(r->body).value("id", int64_t(-1));
}

json wait_until_finished(httplib::Client& c, const std::string& token, int64_t id, int seconds) {
  json j;
  for (int i = 0; i < seconds * 5; ++i) {
    auto r = c.Get("/api/jobs/" + std::to_string(id), bearer(token));
    if (r && r->status == 200) {
      j = json::parse(r->body);
      if (j["state"] != "queued" && j["state"] != "running") return j;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ADD_FAILURE() << "job " << id << " did not finish: " << j.dump();
  return j;
}

fs::path run_job(httplib::Client& c, const std::string& token, const Site& site, const std::string& pipeline, const std::string& log) {
  const json body = {{"input", "clips/cfr.mkv"}, {"output", "out.mkv"}, {"pipeline", pipeline}, {"codec", "ffv1"}, {"segment_frames", 10}};
  const int64_t id = submit(c, token, body.dump());
  if (id < 0) return {};
  const json done = wait_until_finished(c, token, id, 300);
  EXPECT_EQ(done["state"], "done") << done.dump() << "\n" << log;
  if (done["state"] != "done") return {};
  return site.data / "outputs" / std::to_string(id) / "out.mkv";
}

std::vector<std::string> stage_option_names(httplib::Client& c, const std::string& token, const std::string& stage) {
  auto r = c.Get("/api/stages", bearer(token));
  EXPECT_TRUE(r && r->status == 200);
  std::vector<std::string> names;
  if (!r || r->status != 200) return names;
  const json stages = json::parse(r->body)["stages"];
  for (const json& st : stages)
    if (st["name"] == stage)
      for (const json& o : st["options"]) names.push_back(o["name"]);
  EXPECT_FALSE(names.empty()) << stage << " is not listed: " << r->body;
  return names;
}

}  // namespace framelift::test
