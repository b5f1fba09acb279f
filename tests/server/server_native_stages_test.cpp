// framelift serve runs the native stages of issue 32: the builder's stage list offers `style`,
// `inpaint`, `colorize` and `faces` with their options, and the committed seeded checkpoints
// (TransformerNet, LaMa, DDColor), lying in the media root where a user's own files are, restyle
// every frame of a job of segments, fill a box in every frame of one leaving the rest of each
// frame alone, colour one while keeping its luma, and restore the faces (seeded GFPGAN and
// RetinaFace) in every frame of one.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "cli/cli_runner.h"
#include "server/server_process.h"
#include "server/server_site.h"
#include "support/media_check.h"
#include "support/test_paths.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

// A site whose media root holds one committed checkpoint (tests/data/arch/NAME) under models/.
class ServeNativeStage : public ::testing::Test {
 protected:
  void start(const std::string& checkpoint) {
    token = site.token("alice");
    fs::create_directories(site.media / "models");
    model = site.media / "models" / checkpoint;
    fs::copy_file(source_dir() / "tests" / "data" / "arch" / checkpoint, model);
    server = std::make_unique<ServerProcess>(site.args(), site.dir / "server.log");
    ASSERT_FALSE(server->url().empty()) << server->log();
    c = client(*server);
  }

  // Another committed checkpoint beside the first (faces' detector).
  fs::path add(const std::string& checkpoint) {
    const fs::path file = site.media / "models" / checkpoint;
    fs::copy_file(source_dir() / "tests" / "data" / "arch" / checkpoint, file);
    return file;
  }

  void expect_offered(const std::string& stage, std::initializer_list<const char*> options) {
    const std::vector<std::string> names = stage_option_names(*c, token, stage);
    for (const char* o : options) EXPECT_NE(std::find(names.begin(), names.end(), o), names.end()) << stage << " " << o;
  }

  fs::path job(const std::string& pipeline) { return run_job(*c, token, site, pipeline, server->log()); }

  // The clip's frames through `pipeline` as the decoded planes of `pix_fmt`, via the ffmpeg CLI.
  std::string planes(const fs::path& video, const std::string& pix_fmt) {
    const fs::path raw = site.dir / (video.parent_path().filename().string() + "." + pix_fmt);
    EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -i " + shell_quote(video) + " -f rawvideo -pix_fmt " + pix_fmt + " " + shell_quote(raw)), 0);
    std::ifstream in(raw, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  Site site;
  std::string token;
  fs::path model;
  std::unique_ptr<ServerProcess> server;
  std::unique_ptr<httplib::Client> c;
};

TEST_F(ServeNativeStage, StyleIsOfferedAndAJobRestylesEveryFrame) {
  start("fast_neural_style-w8.pth");
  expect_offered("style", {"model", "precision"});
  const fs::path out = job("resize:scale=0.25,style:model=" + model.string());
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(count_frames(out), count_frames(site.media / "clips" / "cfr.mkv"));
  // Against the same downscale without the style: every frame differs.
  const fs::path plain = job("resize:scale=0.25");
  ASSERT_FALSE(plain.empty());
  EXPECT_LT(video_psnr(out, plain), 25.0);
}

TEST_F(ServeNativeStage, InpaintIsOfferedAndAJobFillsABoxOnly) {
  start("lama-ngf8.pth");
  expect_offered("inpaint", {"model", "mask", "box", "dilate", "resolution"});
  // The same job with and without the stage (80x60 frames): the box differs, every luma sample
  // 2 px or more away from it (4:2:0 chroma reaches 1 px) is the same.
  const fs::path plain = job("resize:scale=0.25"), filled = job("resize:scale=0.25,inpaint:model=" + model.string() + ":box=8,8,24,16");
  ASSERT_FALSE(plain.empty() || filled.empty());
  EXPECT_EQ(count_frames(filled), count_frames(site.media / "clips" / "cfr.mkv"));
  const std::string a = planes(plain, "gray"), b = planes(filled, "gray");
  ASSERT_EQ(a.size(), b.size());
  size_t outside_differs = 0, inside_differs = 0, inside = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const int x = int(i % 80), y = int(i / 80 % 60);
    const bool in_box = x >= 8 && x < 32 && y >= 8 && y < 24, near_box = x >= 6 && x < 34 && y >= 6 && y < 26;
    if (in_box) {
      ++inside;
      inside_differs += a[i] != b[i];
    } else if (!near_box) {
      outside_differs += a[i] != b[i];
    }
  }
  EXPECT_EQ(outside_differs, 0u);
  EXPECT_GT(inside_differs, inside / 2);
}

TEST_F(ServeNativeStage, ColorizeIsOfferedAndAJobKeepsTheLuma) {
  start("ddcolor-narrow.pth");
  expect_offered("colorize", {"model", "size", "smooth"});
  // The clip made black and white with the same resize, with and without the stage: the luma
  // planes agree, the chroma does not.
  const std::string grey = "resize:scale=0.25,filter:graph=hue=s=0";
  const fs::path plain = job(grey), coloured = job(grey + ",colorize:model=" + model.string() + ":size=64:smooth=3");
  ASSERT_FALSE(plain.empty() || coloured.empty());
  const std::string a = planes(plain, "yuv420p"), b = planes(coloured, "yuv420p");
  ASSERT_EQ(a.size(), b.size());
  const size_t frame = 80 * 60 * 3 / 2, luma = 80 * 60;
  size_t luma_off = 0, chroma_off = 0, chroma = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const int d = std::abs(int(uint8_t(a[i])) - int(uint8_t(b[i])));
    if (i % frame < luma) {
      luma_off += d > 1;
    } else {
      ++chroma;
      chroma_off += d > 0;
    }
  }
  EXPECT_LT(luma_off, a.size() / 1000) << "luma kept (samples clipped below black or above white aside)";
  EXPECT_GT(chroma_off, chroma / 2) << "colour added";
}

TEST_F(ServeNativeStage, FacesIsOfferedAndAJobRestoresFacesInEveryFrame) {
  start("gfpgan-narrow.pth");
  const fs::path detector = add("retinaface-mnet.pth");
  expect_offered("faces", {"model", "detector", "aligned", "w", "confidence", "detect_size", "hold", "smooth"});
  const fs::path plain = job("resize:scale=0.25");
  const fs::path restored = job("resize:scale=0.25,faces:model=" + model.string() + ":detector=" + detector.string() + ":confidence=0.99");
  ASSERT_FALSE(plain.empty() || restored.empty());
  EXPECT_EQ(count_frames(restored), count_frames(site.media / "clips" / "cfr.mkv"));
  EXPECT_LT(video_psnr(restored, plain), 40.0) << "faces were restored (the seeded detector finds some in every frame)";
}

}  // namespace
}  // namespace framelift::test
