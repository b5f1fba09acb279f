// framelift serve and ONNX files (issue 31): a model imported from an .onnx file is on the model
// page (GET /api/models) with its architecture and scale, and a job runs it by name, as a .pth
// model's would be. The network is built here (tests/support/onnx_builder.h), not committed: a
// 3x3 convolution whose 12 channels copy the input's three and a DepthToSpace, so the output is
// the picture enlarged 2x by nearest neighbour, which ffmpeg's own scaler gives independently.
// Also: `models import` takes the .onnx file and the model page shows what detection made of it.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "server/server_process.h"
#include "server/server_site.h"
#include "support/media_check.h"
#include "support/onnx_builder.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;
namespace ob = onnx_build;
using nlohmann::json;

void write_nearest_x2_onnx(const fs::path& path) {
  const std::vector<uint8_t> bytes = ob::model(ob::nearest_upscale_graph(2)).bytes();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

json model_entry(httplib::Client& c, const std::string& token, const std::string& name) {
  auto r = c.Get("/api/models", bearer(token));
  EXPECT_TRUE(r && r->status == 200);
  if (!r) return json();
  const json list = json::parse(r->body);
  for (const json& m : list["models"])
    if (m["name"] == name) return m;
  return json();
}

TEST(ServeOnnx, AnImportedOnnxModelIsListedAndAJobRunsItByName) {
  Site site;
  const std::string token = site.token("alice");
  const fs::path models = site.dir / "models", file = site.dir / "nearest-x2.onnx";
  write_nearest_x2_onnx(file);
  std::string imported;
  ASSERT_EQ(run_command("FRAMELIFT_MODELS=" + shell_quote(models) + " " + shell_quote(cli_path()) + " models import " +
                            shell_quote(file) + " --name onnx-nearest-x2",
                        &imported),
            0)
      << imported;

  ServerProcess server(site.args(), site.dir / "server.log", {{"FRAMELIFT_MODELS", models.string()}});
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const json entry = model_entry(*c, token, "onnx-nearest-x2");
  ASSERT_TRUE(entry.is_object()) << "the imported ONNX model is not on the model page";
  EXPECT_EQ(entry["architecture"], "onnx") << entry.dump();
  EXPECT_EQ(entry["scale"], 2) << entry.dump();
  EXPECT_EQ(entry["installed"], true) << entry.dump();
  EXPECT_EQ(entry["catalog"], false) << entry.dump();

  const std::string body = json{{"input", "clips/cfr.mkv"},
                                {"output", "out.mkv"},
                                {"pipeline", "upscale:model=onnx-nearest-x2"},
                                {"codec", "ffv1"},
                                {"segment_frames", 10}}
                               .dump();
  const int64_t id = submit(*c, token, body);
  ASSERT_GE(id, 0);
  const json done = wait_until_finished(*c, token, id, 300);
  ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << server.log();
  const fs::path out = site.data / "outputs" / std::to_string(id) / "out.mkv";
  const fs::path input = site.media / "clips" / "cfr.mkv";
  EXPECT_EQ(count_frames(out), count_frames(input));
  // framelift's stages pass RGB, whose conversion changes this clip's saturated bars: the 1x
  // picture to compare with is the same clip through a stage that changes nothing, and the
  // network's output is that picture with every pixel doubled, exactly, in its luma.
  const fs::path same = site.dir / "same.mkv";
  auto r = framelift("run -i " + shell_quote(input) + " -o " + shell_quote(same) + " --codec ffv1 --no-job --pipeline filter:graph=null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> doubled = luma_md5s(same, "scale=iw*2:ih*2:flags=neighbor,"), enlarged = luma_md5s(out, "");
  ASSERT_EQ(enlarged.size(), doubled.size());
  EXPECT_EQ(enlarged, doubled) << "the ONNX network did not enlarge the frames as it is built to";
}

}  // namespace
}  // namespace framelift::test
