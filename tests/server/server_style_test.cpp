// framelift serve runs the `style` stage (issue 32, item 4): the builder's stage list offers it
// with its model option, and the committed seeded TransformerNet checkpoint, lying in the media
// root where a user's own files are, restyles every frame of a job of segments.
#include <gtest/gtest.h>
#include <httplib.h>

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

}  // namespace
}  // namespace framelift::test
