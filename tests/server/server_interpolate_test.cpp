// framelift serve runs IFRNet and FILM jobs (issue 35): the committed seeded IFRNet S checkpoint, lying
// in the media root where a user's own files are, as interpolate:model=FILE in a job of segments.
#include <gtest/gtest.h>
#include <httplib.h>


#include "server/server_process.h"
#include "server/server_site.h"
#include "support/media_check.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

TEST(ServeInterpolate, AnIfrnetFileDoublesTheFramesOfAJob) {
  Site site;
  const std::string token = site.token("alice");
  fs::create_directories(site.media / "models");
  const fs::path model = site.media / "models" / "ifrnet-s.pth";
  fs::copy_file(source_dir() / "tests" / "data" / "arch" / "ifrnet-s.pth", model);
  ServerProcess server(site.args(), site.dir / "server.log");
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto c = client(server);
  const fs::path out = run_job(*c, token, site, "resize:scale=0.25,interpolate:model=" + model.string() + ":factor=2", server.log());
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(count_frames(out), 2 * count_frames(site.media / "clips" / "cfr.mkv"));
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
  const fs::path out = run_job(*c, token, site, "resize:scale=0.25,interpolate:model=" + model.string() + ":factor=4:recursive=1", server.log());
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(count_frames(out), 4 * count_frames(site.media / "clips" / "cfr.mkv"));
}

}  // namespace
}  // namespace framelift::test
