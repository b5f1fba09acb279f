// framelift serve against crafted weights (issue 30, case 2): a preview whose pipeline names a
// .safetensors with zero attention heads once killed the server with SIGFPE, and every running
// job with it. Now each is a 400 with the one-line reason (http_api.cpp maps ErrorKind::Model to
// 400 for previews), the server stays up, and a job running meanwhile finishes.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "server/server_process.h"
#include "server/server_site.h"
#include "support/crafted_weights.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(ServeWeights, ZeroHeadsPreviewsAre400AndTheServerKeepsServing) {
  Site site;
  const std::string token = site.token("alice");
  // The crafted files lie in the media root, where a user's own files are (no route takes an
  // upload as a model; an uploaded file is an input).
  const fs::path models = site.media / "models";
  fs::create_directories(models);
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const int64_t job = submit(*c, token, job_body());
  ASSERT_GE(job, 0);

  for (const std::string& arch : attention_architectures()) {
    SCOPED_TRACE(arch);
    const fs::path file = write_zero_heads(models, arch);
    const std::string body = json{{"input", "clips/cfr.mkv"}, {"pipeline", "upscale:model=" + file.string()}}.dump();
    // 429 says the previous preview's slot is not free yet ("try again in a moment"): do so.
    auto r = c->Post("/api/preview", bearer(token), body, "application/json");
    for (int tries = 0; r && r->status == 429 && tries < 100; ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      r = c->Post("/api/preview", bearer(token), body, "application/json");
    }
    ASSERT_TRUE(r) << "no answer: the server died?\n" << server.log();
    EXPECT_EQ(r->status, 400) << r->body;
    const std::string why = json::parse(r->body).value("error", "");
    EXPECT_NE(why.find(file.filename().string()), std::string::npos) << why;
    EXPECT_NE(why.find("heads 0"), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    auto health = c->Get("/api/health");
    ASSERT_TRUE(health) << server.log();
    EXPECT_EQ(health->status, 200);
  }
  const json done = wait_until_finished(*c, token, job);
  EXPECT_EQ(done["state"], "done") << done.dump() << "\n" << server.log();
}

}  // namespace
}  // namespace framelift::test
