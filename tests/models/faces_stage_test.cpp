// The `faces` stage (issue 32, item 3) through the product, with the committed seeded networks
// (tests/data/arch: gfpgan-narrow, codeformer-narrow, restoreformer-pp-narrow and retinaface-mnet,
// each checked against upstream's code in its arch test):
// * aligned=true: a still face crop through `run` is upstream's restored face, to the 8-bit
//   rounding, for each network (CodeFormer at w=0 and w=1, which differ);
// * on a real clip the detector finds faces (the seeded detector finds random ones: this checks
//   the plumbing, not what a trained RetinaFace finds), they are restored and pasted back, and a
//   job of two-frame segments gives the pass's frames bit for bit (hold= and smooth= need the
//   frames before a segment); with no face found the frames are the input's, bit for bit;
// * faces before and after a 2x upscale in one pass;
// * models info and the planner know each network; the planner adds the detector's cost;
// * a missing detector, a crop of the wrong size for aligned=true, w= for a network without a
//   fidelity weight, a network of another kind and a detector that is not RetinaFace are refused.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "models/arch_support.h"
#include "support/media_check.h"
#include "support/test_paths.h"
#include "weights/load_weights.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

std::string reference(const std::string& name) { return (arch_reference_dir() / (name + ".pth")).string(); }
std::string detector() { return reference("retinaface-mnet"); }

// 6 frames of real footage (faces in it) at 160x112 in lossless RGB, so that "bit for bit" is
// about the stage, not a 4:2:0 round trip.
fs::path face_clip(const fs::path& dir) {
  const fs::path clip = dir / "clip.mkv";
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi -vf "
                        "'scale=160:112,format=gbrp' -frames:v 6 -c:v ffv1 " + shell_quote(clip)),
            0);
  return clip;
}

CliResult run_faces(const fs::path& in, const fs::path& out, const std::string& pipeline, const std::string& extra = "--no-job") {
  return framelift("run -y -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1 --progress none " + extra + " --pipeline '" +
                   pipeline + "'");
}

TEST(FacesStage, AlignedCropsGiveUpstreamsRestoredFace) {
  const auto dir = temp_dir("faces-aligned");
  struct Case {
    std::string net, output, options;
    int size;
  };
  for (const Case& c : {Case{"gfpgan-narrow", "output", "", 64}, Case{"restoreformer-pp-narrow", "output", "", 64},
                        Case{"codeformer-narrow", "output_w0", ":w=0", 32}, Case{"codeformer-narrow", "output_w1", ":w=1", 32}}) {
    const weights::StateDict io = weights::load_weights(arch_reference_dir() / (c.net + ".ref.safetensors"));
    write_png(io.at("input"), dir / "in.png");
    auto r = framelift("run -y -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "out.png") +
                       " --progress none --pipeline 'faces:model=" + reference(c.net) + ":aligned=true:precision=fp32" + c.options + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const at::Tensor got = read_png(dir / "out.png", c.size, c.size).mul(255).round();
    const at::Tensor want = io.at(c.output).clamp(0, 1).mul(255).round();
    const at::Tensor diff = (got - want).abs();
    std::printf("faces aligned=true %s%s vs upstream: max %.0f code(s), %.3f%% exact\n", c.net.c_str(), c.options.c_str(),
                diff.max().item<double>(), 100.0 * diff.eq(0).to(at::kFloat).mean().item<double>());
    EXPECT_LE(diff.max().item<double>(), 1.0) << c.net << c.options;
  }
}

TEST(FacesStage, ARealClipAsAPassAndAsAJob) {
  const auto dir = temp_dir("faces-clip");
  const fs::path clip = face_clip(dir);
  const std::string faces = "faces:model=" + reference("gfpgan-narrow") + ":detector=" + detector();
  auto pass = run_faces(clip, dir / "pass.mkv", faces + ":confidence=0.99");
  ASSERT_EQ(pass.exit_code, 0) << pass.output;
  EXPECT_NE(pass.output.find("restored on 6 of 6 frame(s)"), std::string::npos) << pass.output;
  const at::Tensor in = rgb_frames(clip, 160, 112), out = rgb_frames(dir / "pass.mkv", 160, 112);
  ASSERT_EQ(out.size(0), 6);
  const double changed = (in != out).any(3).to(at::kFloat).mean().item<double>();
  // The seeded detector's landmarks are random, so its "faces" are crops of any size and angle,
  // most of the frame in all: this checks that faces are restored and pasted, not where.
  std::printf("faces on a real clip: %.1f%% of pixels changed\n", 100 * changed);
  EXPECT_GT(changed, 0.01);

  auto job = run_faces(clip, dir / "job.mkv", faces + ":confidence=0.99", "--segment-frames 2");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  EXPECT_TRUE(at::equal(rgb_frames(dir / "job.mkv", 160, 112), out)) << "a job of segments differs from the pass";

  // No face scores this high: every frame is the input's.
  auto none = run_faces(clip, dir / "none.mkv", faces + ":confidence=0.99999");
  ASSERT_EQ(none.exit_code, 0) << none.output;
  EXPECT_NE(none.output.find("0 face(s) restored"), std::string::npos) << none.output;
  EXPECT_TRUE(at::equal(rgb_frames(dir / "none.mkv", 160, 112), in));
}

TEST(FacesStage, BeforeAndAfterAnUpscaleInOnePass) {
  const auto dir = temp_dir("faces-chain");
  const fs::path clip = face_clip(dir);
  const std::string upscale = "upscale:model=" + (deps_dir() / "npm/waifu2x/package/real-esrgan/models/realesr-animevideov3-x2.param").string();
  const std::string faces = "faces:model=" + reference("restoreformer-pp-narrow") + ":detector=" + detector() + ":confidence=0.99";
  for (const std::string& chain : {upscale + "," + faces, faces + "," + upscale}) {
    auto r = run_faces(clip, dir / "chain.mkv", chain);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("restored on"), std::string::npos) << r.output;
    const auto probe = ffprobe(dir / "chain.mkv");
    EXPECT_EQ(probe["streams"][0]["width"], 320) << chain;
    EXPECT_EQ(probe["streams"][0]["height"], 224) << chain;
    EXPECT_EQ(count_frames(dir / "chain.mkv"), 6) << chain;
  }
}

TEST(FacesStage, ModelsInfoAndThePlanner) {
  for (const auto& [net, arch] : std::vector<std::pair<std::string, std::string>>{
           {"gfpgan-narrow", "gfpgan"}, {"codeformer-narrow", "codeformer"}, {"restoreformer-pp-narrow", "restoreformer"}}) {
    auto info = framelift("models info " + shell_quote(reference(net)));
    ASSERT_EQ(info.exit_code, 0) << info.output;
    const auto j = nlohmann::json::parse(info.output.substr(info.output.find('{')));
    EXPECT_EQ(j["native"]["arch"], arch) << info.output;
  }
  const auto dir = temp_dir("faces-plan");
  const fs::path clip = face_clip(dir);
  const std::string model = "faces:model=" + reference("gfpgan-narrow");
  // aligned=true on a crop of the face size: the restorer alone, once a frame.
  write_png(real_frame(64, 64), dir / "crop.png");
  const PlannedStage aligned = plan_first_stage_on_cpu(dir / "crop.png", model + ":aligned=true");
  const PlannedStage small = plan_first_stage_on_cpu(clip, model + ":detector=" + detector());
  const PlannedStage large = plan_first_stage_on_cpu(clip, model + ":detector=" + reference("retinaface-r50-narrow"));
  EXPECT_EQ(small.arch, "gfpgan");
  EXPECT_GT(aligned.seconds_per_frame, 0);
  EXPECT_GT(small.seconds_per_frame, aligned.seconds_per_frame) << "one face a frame and the detector";
  EXPECT_NE(small.seconds_per_frame, large.seconds_per_frame) << "priced by the detector given";
  auto json = framelift("--log-level warn plan -i " + shell_quote(clip) + " --pipeline '" + model + ":detector=" + detector() +
                        "' --local --gpu cpu -c ffv1 --precision fp32 --json");
  ASSERT_NE(json.output.find('{'), std::string::npos) << json.output;
  const auto plan = nlohmann::json::parse(json.output.substr(json.output.find('{')));
  EXPECT_EQ(plan["job"]["stages"][0]["model"], "gfpgan-narrow.pth (one face a frame)") << json.output;
  // A detector the planner cannot price leaves the stage unpriced, never free.
  auto unknown = framelift("--log-level warn plan -i " + shell_quote(clip) + " --pipeline '" + model + ":detector=" + reference("gfpgan-narrow") +
                           "' --local --gpu cpu --json -c ffv1 --precision fp32");
  EXPECT_EQ(unknown.output.find("counted as free"), std::string::npos) << unknown.output;
}

TEST(FacesStage, BadCombinationsAreRefusedByName) {
  const auto dir = temp_dir("faces-refused");
  write_png(real_frame(48, 40), dir / "in.png");
  const std::string head = "run -y -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "out.png") + " --pipeline ";
  struct Case {
    std::string pipeline, message;
  };
  for (const Case& c : {Case{"faces:model=" + reference("gfpgan-narrow"), "detector=FILE"},
                        Case{"faces:model=" + reference("gfpgan-narrow") + ":aligned=true", "aligned=true takes 64x64 face crops"},
                        Case{"faces:model=" + reference("gfpgan-narrow") + ":aligned=true:w=0.3", "w= is CodeFormer's fidelity weight"},
                        Case{"faces:model=" + reference("lama-ngf8") + ":aligned=true", "is a lama network, not a face restoration one"},
                        Case{"faces:model=" + reference("codeformer-narrow") + ":aligned=true:precision=bf16", "runs in fp32, not bf16"},
                        Case{"faces:model=" + reference("gfpgan-narrow") + ":detector=" + reference("gfpgan-narrow"), "RetinaFace"}}) {
    auto r = framelift(head + "'" + c.pipeline + "'");
    EXPECT_EQ(r.exit_code, c.message == "RetinaFace" ? 5 : 2) << c.pipeline << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.pipeline << "\n" << r.output;
    EXPECT_FALSE(fs::exists(dir / "out.png")) << c.pipeline;
  }
}

}  // namespace
}  // namespace framelift::test
