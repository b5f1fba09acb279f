// framelift serve runs IFRNet and FILM jobs (issue 35): the committed seeded IFRNet S checkpoint, lying
// in the media root where a user's own files are, as interpolate:model=FILE in a job of segments.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "server/server_process.h"
#include "server/server_site.h"
#include "support/media_check.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(ServeInterpolate, AnIfrnetFileDoublesTheFramesOfAJob) {
  Site site;
  const std::string token = site.token("alice");
  fs::create_directories(site.media / "models");
  const fs::path model = site.media / "models" / "ifrnet-s.pth";
  fs::copy_file(source_dir() / "tests" / "data" / "arch" / "ifrnet-s.pth", model);
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const std::string body = json{{"input", "clips/cfr.mkv"},
                                {"output", "out.mkv"},
                                {"pipeline", "resize:scale=0.25,interpolate:model=" + model.string() + ":factor=2"},
                                {"codec", "ffv1"},
                                {"segment_frames", 10}}
                               .dump();
  const int64_t id = submit(*c, token, body);
  ASSERT_GE(id, 0);
  const json done = wait_until_finished(*c, token, id, 300);
  ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << server.log();
  EXPECT_EQ(count_frames(site.data / "outputs" / std::to_string(id) / "out.mkv"), 2 * count_frames(site.media / "clips" / "cfr.mkv"));
}

// And FILM (the committed seeded 5-level checkpoint, tests/models/film_test.cpp), recursively.
TEST(ServeInterpolate, AFilmFileQuadruplesTheFramesOfAJob) {
  Site site;
  const std::string token = site.token("alice");
  fs::create_directories(site.media / "models");
  const fs::path model = site.media / "models" / "film-p5.pth";
  fs::copy_file(source_dir() / "tests" / "data" / "arch" / "film-p5-f8-fp16.pth", model);
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const std::string body = json{{"input", "clips/cfr.mkv"},
                                {"output", "out.mkv"},
                                {"pipeline", "resize:scale=0.25,interpolate:model=" + model.string() + ":factor=4:recursive=1"},
                                {"codec", "ffv1"},
                                {"segment_frames", 10}}
                               .dump();
  const int64_t id = submit(*c, token, body);
  ASSERT_GE(id, 0);
  const json done = wait_until_finished(*c, token, id, 300);
  ASSERT_EQ(done["state"], "done") << done.dump() << "\n" << server.log();
  EXPECT_EQ(count_frames(site.data / "outputs" / std::to_string(id) / "out.mkv"), 4 * count_frames(site.media / "clips" / "cfr.mkv"));
}

}  // namespace
}  // namespace framelift::test
