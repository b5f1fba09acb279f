// The catalog's ONNX entries (issue 31): data/models.json lists ONNX releases from OpenModelDB
// (format onnx, one .onnx file with OpenModelDB's size and SHA-256, architecture what the network
// is). Their bytes cannot be fetched here, so 4x-SPANkendata's own entry is served with its file
// swapped for a network built here (a 3x3 convolution copying the input into 48 channels and a
// DepthToSpace: nearest x4, which ffmpeg's scaler gives independently), the file's size and hash
// replaced by that network's, from a local HTTP server. `models install` fetches and checks it,
// `upscale -m NAME` runs it on real footage, and `plan` prices every ONNX entry before install.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "net/local_http_server.h"
#include "support/media_check.h"
#include "support/onnx_builder.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;
namespace ob = onnx_build;
using nlohmann::json;

const char* kModel = "4x-SPANkendata";

// `framelift ARGS` with `env` (VAR=value ...) before it; plan's text goes to stderr, dropped for --json.
CliResult run(const std::string& args, const std::string& env) {
  CliResult r;
  r.exit_code = run_command(env + " " + shell_quote(cli_path()) + " " + args, &r.output);
  return r;
}

json real_catalog() {
  std::ifstream in(source_dir() / "data" / "models.json");
  return json::parse(in);
}

void write_nearest_x4_onnx(const fs::path& path) {
  const std::vector<uint8_t> bytes = ob::model(ob::nearest_upscale_graph(4)).bytes();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

std::string sha256_of(const fs::path& file) {
  std::string out;
  EXPECT_EQ(run_command("sha256sum " + shell_quote(file), &out), 0) << out;
  return out.substr(0, 64);
}

TEST(CatalogOnnx, EveryOnnxEntryIsOneOnnxFileAndPricedByItsArchitectureBeforeInstall) {
  const json catalog = real_catalog();
  int onnx = 0;
  for (const json& m : catalog["models"]) {
    if (m["format"] != "onnx") continue;
    ++onnx;
    const std::string name = m["name"];
    SCOPED_TRACE(name);
    ASSERT_EQ(m["files"].size(), 1u);
    const std::string file = m["files"][0]["name"];
    EXPECT_EQ(fs::path(file).extension(), ".onnx");
    const json& source = m["sources"][0];
    EXPECT_EQ(source["format"], "onnx");
    EXPECT_EQ(source["url"].get<std::string>().rfind("https://", 0), 0u);
    // Not installed (an empty cache): the planner prices it from the catalog's architecture.
    const fs::path cache = temp_dir("catalog-onnx-plan");
    auto r = run("plan -i " + shell_quote(media("real_megamind.mkv")) + " --pipeline 'upscale:model=" + name + "' --json 2>/dev/null",
                 "FRAMELIFT_MODELS=" + shell_quote(cache));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json stage = json::parse(r.output)["job"]["stages"][0];
    EXPECT_EQ(stage["arch"], m["architecture"]) << stage.dump();
    EXPECT_EQ(stage["cost_known"], true) << stage.dump();
    EXPECT_GT(stage["gflops_per_input_megapixel"].get<double>(), 0) << stage.dump();
  }
  EXPECT_GE(onnx, 6) << "data/models.json lists fewer ONNX releases than docs/model-library.md names";
}

TEST(CatalogOnnx, AnOnnxEntryInstallsFromItsUrlAndRunsByName) {
  const fs::path dir = temp_dir("catalog-onnx"), www = dir / "www", cache = dir / "models";
  fs::create_directories(www);
  json catalog = real_catalog();
  json entry;
  for (const json& m : catalog["models"])
    if (m["name"] == kModel) entry = m;
  ASSERT_TRUE(entry.is_object()) << kModel << " is not in data/models.json";
  ASSERT_EQ(entry["format"], "onnx");
  const std::string file = entry["files"][0]["name"];
  write_nearest_x4_onnx(www / file);
  LocalHttpServer server(www);
  entry["files"][0]["size"] = fs::file_size(www / file);
  entry["files"][0]["sha256"] = sha256_of(www / file);
  entry["sources"][0]["url"] = server.url(file);
  catalog["models"] = json::array({entry});
  std::ofstream(dir / "catalog.json") << catalog.dump();
  const std::string env = "FRAMELIFT_CATALOG=" + shell_quote(dir / "catalog.json") + " FRAMELIFT_MODELS=" + shell_quote(cache);

  auto r = run(std::string("models install ") + kModel, env);
  ASSERT_EQ(r.exit_code, 0) << r.output << server.request_log();
  EXPECT_NE(server.request_log().find("GET /" + file), std::string::npos) << server.request_log();
  r = run("models verify", env);
  EXPECT_EQ(r.exit_code, 0) << r.output;

  const fs::path input = media("real_megamind.mkv"), out = dir / "out.mkv", same = dir / "same.mkv";
  r = run("upscale -i " + shell_quote(input) + " -o " + shell_quote(out) + " -m " + kModel + " --frames 3 -c ffv1 --no-job", env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The stages pass RGB: the 1x picture to compare with is the clip through a stage that changes
  // nothing, and the network's output is that picture with every pixel repeated 4x4, in its luma.
  r = run("run -i " + shell_quote(input) + " -o " + shell_quote(same) + " --frames 3 -c ffv1 --no-job --pipeline filter:graph=null", env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> enlarged = luma_md5s(out, ""), expected = luma_md5s(same, "scale=iw*4:ih*4:flags=neighbor,");
  ASSERT_EQ(enlarged.size(), 3u);
  EXPECT_EQ(enlarged, expected) << "the installed ONNX file did not run as built";

  // A file whose bytes are not the catalog's installs nothing.
  std::ofstream(www / file, std::ios::binary | std::ios::app) << "x";
  const fs::path other = dir / "other-models";
  r = run(std::string("models install ") + kModel,
          "FRAMELIFT_CATALOG=" + shell_quote(dir / "catalog.json") + " FRAMELIFT_MODELS=" + shell_quote(other));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("SHA-256"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(other / kModel));
}

}  // namespace
}  // namespace framelift::test
