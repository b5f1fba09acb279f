// framelift serve runs the native stages of issue 32: the builder's stage list offers `style` and
// `inpaint` with their options, and the committed seeded checkpoints (TransformerNet, LaMa), lying
// in the media root where a user's own files are, restyle every frame of a job of segments and
// fill a box in every frame of one, leaving the rest of each frame alone.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <set>

#include "cli/cli_runner.h"
#include "server/server_process.h"
#include "server/server_site.h"
#include "support/media_check.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(ServeStyle, TheBuilderOffersStyleAndAJobRestylesEveryFrame) {
  Site site;
  const std::string token = site.token("alice");
  fs::create_directories(site.media / "models");
  const fs::path model = site.media / "models" / "style.pth";
  fs::copy_file(source_dir() / "tests" / "data" / "arch" / "fast_neural_style-w8.pth", model);
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);

  auto listed = c->Get("/api/stages", bearer(token));
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->status, 200) << listed->body;
  bool offered = false;
  const json stages = json::parse(listed->body)["stages"];
  for (const json& st : stages)
    if (st["name"] == "style")
      for (const json& option : st["options"]) offered = offered || option["name"] == "model";
  EXPECT_TRUE(offered) << listed->body;

  const std::string body = json{{"input", "clips/cfr.mkv"},
                                {"output", "out.mkv"},
                                {"pipeline", "resize:scale=0.25,style:model=" + model.string()},
                                {"codec", "ffv1"},
                                {"segment_frames", 10}}
                               .dump();
  const int64_t id = submit(*c, token, body);
  ASSERT_GE(id, 0);
  const json done = wait_until_finished(*c, token, id, 300);
  ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << server.log();
  const fs::path out = site.data / "outputs" / std::to_string(id) / "out.mkv";
  EXPECT_EQ(count_frames(out), count_frames(site.media / "clips" / "cfr.mkv"));
  // Against the same downscale without the style: every frame differs.
  const fs::path plain = site.dir / "plain.mkv";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i " + shell_quote(site.media / "clips" / "cfr.mkv") +
                        " -vf scale=iw/4:ih/4 -c:v ffv1 " + shell_quote(plain)),
            0);
  EXPECT_LT(video_psnr(out, plain), 25.0);
}

TEST(ServeInpaint, TheBuilderOffersInpaintAndAJobFillsABoxOnly) {
  Site site;
  const std::string token = site.token("alice");
  fs::create_directories(site.media / "models");
  const fs::path model = site.media / "models" / "lama.pth";
  fs::copy_file(source_dir() / "tests" / "data" / "arch" / "lama-ngf8.pth", model);
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);

  auto listed = c->Get("/api/stages", bearer(token));
  ASSERT_TRUE(listed);
  std::set<std::string> options;
  const json stages = json::parse(listed->body)["stages"];
  for (const json& st : stages)
    if (st["name"] == "inpaint")
      for (const json& option : st["options"]) options.insert(option["name"].get<std::string>());
  for (const char* o : {"model", "mask", "box", "dilate", "resolution"}) EXPECT_TRUE(options.count(o)) << o << " " << listed->body;

  // The same job with and without the stage (80x60 frames): the box differs, every luma sample
  // 2 px or more away from it (4:2:0 chroma reaches 1 px) is the same.
  std::vector<std::vector<uint8_t>> luma;
  for (const std::string pipeline : {std::string("resize:scale=0.25"), "resize:scale=0.25,inpaint:model=" + model.string() + ":box=8,8,24,16"}) {
    const std::string body = json{{"input", "clips/cfr.mkv"}, {"output", "out.mkv"}, {"pipeline", pipeline}, {"codec", "ffv1"}, {"segment_frames", 10}}.dump();
    const int64_t id = submit(*c, token, body);
    ASSERT_GE(id, 0);
    const json done = wait_until_finished(*c, token, id, 300);
    ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << server.log();
    const fs::path out = site.data / "outputs" / std::to_string(id) / "out.mkv", raw = site.dir / (std::to_string(id) + ".grey");
    EXPECT_EQ(count_frames(out), count_frames(site.media / "clips" / "cfr.mkv"));
    ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i " + shell_quote(out) + " -f rawvideo -pix_fmt gray " + shell_quote(raw)), 0);
    std::ifstream in(raw, std::ios::binary);
    luma.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_EQ(luma[0].size(), luma[1].size());
  ASSERT_GT(luma[0].size(), 0u);
  size_t outside_differs = 0, inside_differs = 0, inside = 0;
  for (size_t i = 0; i < luma[0].size(); ++i) {
    const int x = int(i % 80), y = int(i / 80 % 60);
    const bool in_box = x >= 8 && x < 32 && y >= 8 && y < 24, near_box = x >= 6 && x < 34 && y >= 6 && y < 26;
    if (in_box) {
      ++inside;
      inside_differs += luma[0][i] != luma[1][i];
    } else if (!near_box) {
      outside_differs += luma[0][i] != luma[1][i];
    }
  }
  EXPECT_EQ(outside_differs, 0u);
  EXPECT_GT(inside_differs, inside / 2);
}

}  // namespace
}  // namespace framelift::test
