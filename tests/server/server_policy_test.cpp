// Issue 30, case 1, "a token is not a shell": against a real server on loopback, every way a
// client's pipeline reached files, plugins and the server's own database through libavfilter and
// the model options, in jobs, /api/plan and /api/preview. Each must be refused with a 400 that
// names the stage and why, and leave no trace: no plugin loaded, no file created or truncated, no
// job queued. Errors never name the server's own paths. Ordinary pipelines still run.
#include <gtest/gtest.h>
#include <httplib.h>
#include <dlfcn.h>
#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include <nlohmann/json.hpp>

#include "server/server_process.h"
#include "server/server_site.h"
#include "server/store.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

struct Answer {
  int status = 0;
  std::string error;  // the body's "error", or the body
};

Answer post(httplib::Client& c, const std::string& token, const std::string& path, const json& body) {
  auto r = c.Post(path, bearer(token), body.dump(), "application/json");
  if (!r) return {};
  const json j = json::parse(r->body, nullptr, false);
  return {r->status, j.is_object() && j.contains("error") ? j["error"].get<std::string>() : r->body};
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A complete upload of `bytes` named `name`; its id.
std::string upload(httplib::Client& c, const std::string& token, const std::string& name, const std::string& bytes) {
  auto created = c.Post("/api/uploads", bearer(token), json{{"name", name}, {"size", bytes.size()}}.dump(), "application/json");
  EXPECT_EQ(created->status, 201) << created->body;
  const std::string id = json::parse(created->body)["id"];
  httplib::Headers h = bearer(token);
  h.emplace("Content-Range", "bytes 0-" + std::to_string(bytes.size() - 1) + "/" + std::to_string(bytes.size()));
  auto put = c.Put(("/api/uploads/" + id).c_str(), h, bytes, "application/octet-stream");
  EXPECT_EQ(put->status, 200) << put->body;
  return id;
}

// One server for the whole file; the plugin's marker goes into the site's folder.
class ServePolicy : public ::testing::Test {
 protected:
  void SetUp() override {
    marker = site.dir / "plugin-ran";
    token = site.token("mallory");
    server = std::make_unique<ServerProcess>(site.args(), site.dir / "server.log",
                                             std::map<std::string, std::string>{{"FRAMELIFT_POLICY_MARKER", marker.string()}});
    ASSERT_FALSE(server->url().empty()) << server->log();
    c = client(*server);
  }

  // `pipeline` on the clip as a job, a plan and a preview: each a 400 naming `expect`, with no
  // server path in it; no job queued.
  void refused_everywhere(const std::string& pipeline, const std::string& expect) {
    const json job = {{"input", "clips/cfr.mkv"}, {"output", "out.mkv"}, {"pipeline", pipeline}, {"codec", "ffv1"}};
    for (const auto& [path, body] : std::vector<std::pair<std::string, json>>{
             {"/api/jobs", job}, {"/api/plan", {{"input", "clips/cfr.mkv"}, {"pipeline", pipeline}}},
             {"/api/preview", {{"input", "clips/cfr.mkv"}, {"pipeline", pipeline}}}}) {
      const Answer a = post(*c, token, path, body);
      EXPECT_EQ(a.status, 400) << path << " " << pipeline << ": " << a.error;
      EXPECT_NE(a.error.find(expect), std::string::npos) << path << " " << pipeline << ": " << a.error;
      EXPECT_EQ(a.error.find('\n'), std::string::npos) << "one line: " << a.error;
      EXPECT_EQ(a.error.find(site.dir.string()), std::string::npos) << "no server path: " << a.error;
    }
    auto jobs = c->Get("/api/jobs", bearer(token));
    EXPECT_TRUE(json::parse(jobs->body)["jobs"].empty()) << pipeline << " queued a job: " << jobs->body;
  }

  Site site;
  fs::path marker;
  std::string token;
  std::unique_ptr<ServerProcess> server;
  std::unique_ptr<httplib::Client> c;
};

// The test's own plugin does write its marker when loaded: so its absence below means something.
TEST(ServePolicyPlugin, TheMarkerPluginWritesItsMarkerWhenLoaded) {
  const fs::path marker = temp_dir("marker") / "ran";
  setenv("FRAMELIFT_POLICY_MARKER", marker.c_str(), 1);
  void* handle = dlopen(FRAMELIFT_MARKER_PLUGIN, RTLD_NOW);
  ASSERT_NE(handle, nullptr) << dlerror();
  dlclose(handle);
  unsetenv("FRAMELIFT_POLICY_MARKER");
  EXPECT_TRUE(fs::exists(marker));
}

TEST_F(ServePolicy, AnUploadedPluginIsNeverLoaded) {
  const std::string id = upload(*c, token, "plugin.so", read_file(FRAMELIFT_MARKER_PLUGIN));
  // Where the server keeps it (a client learnt this from the old 400s), and the build's copy.
  const fs::path uploaded = site.data / "uploads" / id / "plugin.so";
  ASSERT_TRUE(fs::exists(uploaded)) << "the upload layout changed; this test must follow it";
  for (const std::string& so : {uploaded.string(), std::string(FRAMELIFT_MARKER_PLUGIN)}) {
    refused_everywhere("filter:graph='ladspa=file=" + so + "'", "filter 'ladspa' is not allowed here");
    refused_everywhere("filter:graph='ladspa=" + so + ":p=x'", "filter 'ladspa' is not allowed here");
    refused_everywhere("filter:graph='lv2=plugin=" + so + "'", "filter 'lv2' is not allowed here");
    refused_everywhere("filter:graph='frei0r=filter_name=" + so + "'", "filter 'frei0r' is not allowed here");
  }
  EXPECT_FALSE(fs::exists(marker)) << "the uploaded plugin ran inside the server";
}

TEST_F(ServePolicy, MovieCannotReadOutsideTheRootsHoweverItIsSpelt) {
  const std::string secret = (site.outside / "secret.mkv").string();
  for (const std::string& graph : std::vector<std::string>{
           "movie=" + secret, "movie=filename=" + secret, "mov\\ie=" + secret, "movie@m=" + secret,
           "hflip,movie=" + secret, "[in]split[a][b];[b]movie=" + secret + "[m];[a][m]overlay", "amovie=" + secret,
           "sws_flags=bicubic;movie=" + secret})
    refused_everywhere("filter:graph='" + graph + "'", "is not allowed here");
  refused_everywhere("filter:graph=[movie=" + secret + "]", "filter 'movie' is not allowed here");
  // Quotes libavfilter's tokenizer removes, inside the pipeline's own "..." quoting.
  refused_everywhere("filter:graph=\"'movie'=" + secret + "\"", "filter 'movie' is not allowed here");
  refused_everywhere("filter:graph=\"'mo'vie='" + secret + "'\"", "filter 'movie' is not allowed here");
}

TEST_F(ServePolicy, DrawtextCannotRenderAnotherFileInAPreview) {
  refused_everywhere("filter:graph='drawtext=textfile=" + (site.outside / "secret.mkv").string() + "'", "filter 'drawtext' is not allowed here");
  refused_everywhere("filter:graph='curves=psfile=" + (site.outside / "secret.mkv").string() + "'",
                     "filter 'curves' option 'psfile' names a file");
}

TEST_F(ServePolicy, MetadataCannotCreateOrTruncateFiles) {
  const fs::path db = site.data / "server.db";
  ASSERT_TRUE(fs::exists(db));
  const std::string before = read_file(db);
  const fs::path fresh = site.outside / "made.txt";
  for (const fs::path& target : {db, fresh}) {
    refused_everywhere("filter:graph='metadata=mode=print:file=" + target.string() + "'", "filter 'metadata' is not allowed here");
    refused_everywhere("filter:graph='metadata=print:file=" + target.string() + "'", "filter 'metadata' is not allowed here");
  }
  EXPECT_FALSE(fs::exists(fresh));
  EXPECT_EQ(fs::file_size(db), before.size()) << "the server's database was truncated";
}

TEST_F(ServePolicy, ModelAndMaskFilesStayInsideTheRoots) {
  std::ofstream(site.outside / "m.pt") << "not a model";
  std::ofstream(site.outside / "m.pth") << "not a model";
  auto listed = c->Get("/api/stages", bearer(token));
  ASSERT_TRUE(listed);
  const json stages = json::parse(listed->body)["stages"];
  for (const std::string& path : {(site.outside / "m.pth").string(), (site.media / ".." / "outside" / "m.pth").string(),
                                  (site.media / "escape" / "m.pth").string(), std::string("/etc/passwd"),
                                  std::string("../outside/m.pth")}) {
    // Every option of every stage that the server says opens a model or a file.
    int checked = 0;
    for (const json& stage : stages)
      for (const json& o : stage["options"]) {
        if (o["opens"] == "") continue;
        const std::string name = stage["name"], option = o["name"];
        refused_everywhere(name + ":" + option + "=" + path, "stage " + name + ": " + option + "= names a file outside the folders allowed here");
        ++checked;
      }
    EXPECT_GE(checked, 9) << "model= of upscale, denoise, interpolate, style, inpaint and colorize; model's file= and mask=; inpaint's mask=";
  }
  // A link inside the root that points out of it.
  fs::create_symlink(site.outside / "m.pt", site.media / "clips" / "link.pt");
  refused_everywhere("model:file=" + (site.media / "clips" / "link.pt").string(), "file= names a file outside the folders allowed here");
  refused_everywhere("model:file=" + (site.media / "clips" / "cfr.mkv").string() + ":mask=" + (site.outside / "secret.mkv").string(),
                     "stage model: mask= names a file outside the folders allowed here");
}

TEST_F(ServePolicy, DevicesAndSizesAreTheServers) {
  refused_everywhere("upscale:device=cpu", "device= cannot be set here");
  refused_everywhere("resize:w=16384:h=720", "w=16384 is over the limit here");
  refused_everywhere("upscale:tile=8192", "tile=8192 is over the limit here");
  refused_everywhere("upscale:batch=256", "batch=256 is over the limit here");
  // A frame size known only from the input: the job fails as its stages are configured.
  const int64_t id = submit(*c, token, json{{"input", "clips/cfr.mkv"}, {"output", "big.mkv"}, {"pipeline", "filter:graph='scale=16000:9000'"},
                                            {"codec", "ffv1"}}.dump());
  const json failed = wait_until_finished(*c, token, id);
  EXPECT_EQ(failed["state"], "failed") << failed.dump();
  EXPECT_NE(failed.value("error", "").find("makes 16000x9000 frames; the limit here is"), std::string::npos) << failed.dump();
}

TEST_F(ServePolicy, ABadUploadIsNamedAsTheClientNamedIt) {
  const std::string id = upload(*c, token, "holiday.mkv", "this is not a video at all");
  for (const std::string& path : {"/api/plan", "/api/preview"}) {
    const Answer a = post(*c, token, path, {{"upload", id}, {"pipeline", "resize:scale=0.5"}});
    EXPECT_EQ(a.status, 400) << path << ": " << a.error;
    EXPECT_NE(a.error.find("holiday.mkv"), std::string::npos) << path << ": " << a.error;
    EXPECT_EQ(a.error.find(site.data.string()), std::string::npos) << path << " names the server's path: " << a.error;
    EXPECT_EQ(a.error.find("/uploads/"), std::string::npos) << path << ": " << a.error;
  }
  // A job from it fails in the worker; its error and events name the upload the same way.
  const int64_t job = submit(*c, token, json{{"upload", id}, {"output", "out.mkv"}, {"pipeline", "resize:scale=0.5"}}.dump());
  const json failed = wait_until_finished(*c, token, job);
  EXPECT_EQ(failed["state"], "failed") << failed.dump();
  const std::string why = failed.value("error", "");
  EXPECT_EQ(why.find(site.data.string()), std::string::npos) << why;
  EXPECT_NE(why.find("holiday.mkv"), std::string::npos) << why;
}

// A job that reached the queue without the route's check (queued by an older server, or straight
// into the database) is held to the policy again when a worker takes it.
TEST(ServePolicyWorkers, AQueuedJobIsCheckedAgainWhenItRuns) {
  Site site;
  const std::string token = site.token("mallory");
  const fs::path target = site.outside / "made.txt";
  {
    server::Store store(site.data);
    const std::optional<server::User> u = store.user_for_token(token);
    ASSERT_TRUE(u);
    server::JobSpec spec;
    spec.input = (site.media / "clips" / "cfr.mkv").string();
    spec.output_name = "out.mkv";
    spec.pipeline = "filter:graph='metadata=mode=print:file=" + target.string() + "'";
    spec.options = {{"input", "clips/cfr.mkv"}, {"root", 0}};
    store.add_job(*u, spec);
  }
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const json jobs = json::parse(c->Get("/api/jobs", bearer(token))->body)["jobs"];
  ASSERT_EQ(jobs.size(), 1u) << jobs.dump();
  const json failed = wait_until_finished(*c, token, jobs[0]["id"].get<int64_t>());
  EXPECT_EQ(failed["state"], "failed") << failed.dump();
  EXPECT_NE(failed.value("error", "").find("filter 'metadata' is not allowed here"), std::string::npos) << failed.dump();
  EXPECT_FALSE(fs::exists(target));
}

TEST_F(ServePolicy, OrdinaryPipelinesStillRun) {
  for (const std::string& pipeline : {"filter:graph=hflip", "filter:graph='eq=contrast=1.2,unsharp'", "resize:w=320:h=180",
                                      "denoise:method=hqdn3d:level=2,filter:graph=[crop=iw-8:ih-8]"}) {
    const Answer preview = post(*c, token, "/api/preview", {{"input", "clips/cfr.mkv"}, {"pipeline", pipeline}});
    EXPECT_EQ(preview.status, 200) << pipeline << ": " << preview.error.substr(0, 300);
    const Answer plan = post(*c, token, "/api/plan", {{"input", "clips/cfr.mkv"}, {"pipeline", pipeline}});
    EXPECT_EQ(plan.status, 200) << pipeline << ": " << plan.error.substr(0, 300);
  }
  const int64_t id = submit(*c, token, json{{"input", "clips/cfr.mkv"}, {"output", "out.mkv"}, {"pipeline", "filter:graph=hflip,resize:scale=0.5"},
                                            {"codec", "ffv1"}, {"segment_frames", 10}}.dump());
  EXPECT_EQ(wait_until_finished(*c, token, id)["state"], "done");
  // A catalog model by name, from the npm packages setup.sh unpacked (.deps), in a preview.
  const Answer upscale = post(*c, token, "/api/preview", {{"input", "clips/cfr.mkv"}, {"pipeline", "resize:w=64:h=36,upscale:model=realesr-animevideov3-x2"}});
  EXPECT_EQ(upscale.status, 200) << upscale.error.substr(0, 300);
}

}  // namespace
}  // namespace framelift::test
