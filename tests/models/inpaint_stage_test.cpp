// The `inpaint` stage (issue 32, item 1) through the product, with the committed seeded LaMa
// (tests/data/arch/lama-ngf8, checked against spandrel's code in arch_lama_test.cpp):
// * a still PNG and its mask through `run` give upstream's composite to the 8-bit rounding;
// * a real clip with a box burned in loses the box, and every pixel outside the mask is the
//   input's, bit for bit, as a pass (box=) and as a job of segments (the same box as a mask video);
// * dilate= grows the mask, resolution= scales a large region down and the fill back up;
// * models info and the planner know LaMa, resolution= lowers the planned cost;
// * a missing mask and a network of another kind are refused by name.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "models/arch_support.h"
#include "support/media_check.h"
#include "weights/load_weights.h"

namespace framelift::test {
namespace {

namespace fs = std::filesystem;

std::string lama_file() { return (arch_reference_dir() / "lama-ngf8.pth").string(); }

// [H, W] true inside the rectangle.
at::Tensor rectangle(int w, int h, int x, int y, int rw, int rh) {
  at::Tensor m = at::zeros({h, w}, at::kBool);
  m.narrow(0, y, rh).narrow(1, x, rw).fill_(true);
  return m;
}

// 6 frames of real footage at 160x112 in lossless RGB (so that "bit for bit" is about the stage,
// not a 4:2:0 round trip), with a yellow box burned in at (60, 40) 30x16.
fs::path boxed_clip(const fs::path& dir) {
  const fs::path clip = dir / "boxed.mkv";
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi -vf "
                        "'scale=160:112,drawbox=x=60:y=40:w=30:h=16:color=yellow:t=fill,format=gbrp' -frames:v 6 -c:v ffv1 " +
                        shell_quote(clip)),
            0);
  return clip;
}

std::string run_inpaint_with(const std::string& model, const fs::path& in, const fs::path& out, const std::string& options,
                             const std::string& extra = "--no-job") {
  auto r = framelift("run -y -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1 --progress none " + extra +
                     " --pipeline 'inpaint:model=" + model + ":" + options + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

std::string run_inpaint(const fs::path& in, const fs::path& out, const std::string& options, const std::string& extra = "--no-job") {
  return run_inpaint_with(lama_file(), in, out, options, extra);
}

TEST(InpaintStage, AStillImageAndItsMaskGiveUpstreamsComposite) {
  const auto dir = temp_dir("inpaint-still");
  const weights::StateDict io = weights::load_weights(arch_reference_dir() / "lama-ngf8.ref.safetensors");
  const at::Tensor input = io.at("input");  // [1, 4, 48, 64]: a real crop and the mask
  write_png(input.narrow(1, 0, 3), dir / "in.png");
  write_png(input.narrow(1, 3, 1).expand({1, 3, 48, 64}), dir / "mask.png");
  // The mask's region with its context is the whole 64x48 frame, a multiple of 8: the network
  // sees exactly upstream's input.
  auto r = framelift("run -y -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "out.png") +
                     " --progress none --pipeline 'inpaint:model=" + lama_file() + ":mask=" + (dir / "mask.png").string() +
                     ":precision=fp32'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const at::Tensor got = read_png(dir / "out.png", 64, 48).mul(255).round();
  const at::Tensor want = io.at("output").clamp(0, 1).mul(255).round();
  const at::Tensor diff = (got - want).abs();
  std::printf("inpaint PNG through run vs upstream: max %.0f code(s), %.3f%% exact\n", diff.max().item<double>(),
              100 * diff.eq(0).to(at::kFloat).mean().item<double>());
  EXPECT_LE(diff.max().item<double>(), 1.0);
  const at::Tensor hole = input.narrow(1, 3, 1).expand({1, 3, 48, 64}) > 0.5;
  EXPECT_TRUE(at::equal(at::masked_select(got, ~hole), at::masked_select(input.narrow(1, 0, 3).mul(255).round(), ~hole)));
}

TEST(InpaintStage, ABurnedInBoxGoesAndEveryOtherPixelIsTheInputsAsAPassAndAsAJob) {
  const auto dir = temp_dir("inpaint-clip");
  const fs::path clip = boxed_clip(dir);
  run_inpaint(clip, dir / "pass.mkv", "box=58,38,34,20");
  // The same rectangle as a mask video (white on black), through a job of 2-frame segments.
  const fs::path mask = dir / "mask.mkv";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -f lavfi -i color=black:s=160x112:r=25 -vf "
                        "'drawbox=x=58:y=38:w=34:h=20:color=white:t=fill' -frames:v 6 -c:v ffv1 " + shell_quote(mask)),
            0);
  run_inpaint(clip, dir / "job.mkv", "mask=" + mask.string(), "--segment-frames 2");

  const at::Tensor in = rgb_frames(clip, 160, 112), pass = rgb_frames(dir / "pass.mkv", 160, 112), job = rgb_frames(dir / "job.mkv", 160, 112);
  ASSERT_EQ(pass.size(0), 6);
  ASSERT_TRUE(at::equal(pass, job)) << "the box and its mask video fill the same pixels the same way";
  const at::Tensor hole = rectangle(160, 112, 58, 38, 34, 20), burned = rectangle(160, 112, 60, 40, 30, 16);
  for (int64_t f = 0; f < 6; ++f) {
    SCOPED_TRACE(f);
    EXPECT_TRUE(at::equal(pass[f].index({~hole}), in[f].index({~hole}))) << "outside the mask, the input bit for bit";
    // The yellow (255, 255, 0) box is gone: its pixels are no longer yellow.
    const at::Tensor box = pass[f].index({burned}).to(at::kFloat);
    const double yellow = (box.select(1, 0) > 200 & box.select(1, 1) > 200 & box.select(1, 2) < 60).to(at::kFloat).mean().item<double>();
    EXPECT_LT(yellow, 0.05);
  }
}

TEST(InpaintStage, DilateGrowsTheMaskAndResolutionScalesALargeRegion) {
  const auto dir = temp_dir("inpaint-dilate");
  const fs::path clip = boxed_clip(dir);
  // A box 2 px inside the burned one, grown by 3: the burned box's edge is filled too.
  run_inpaint(clip, dir / "dilated.mkv", "box=62,42,26,12:dilate=3");
  const at::Tensor in = rgb_frames(clip, 160, 112), out = rgb_frames(dir / "dilated.mkv", 160, 112);
  const at::Tensor grown = rectangle(160, 112, 59, 39, 32, 18);
  EXPECT_TRUE(at::equal(out.index({at::indexing::Slice(), ~grown}), in.index({at::indexing::Slice(), ~grown})));
  const at::Tensor edge = rectangle(160, 112, 60, 40, 30, 16) & ~rectangle(160, 112, 62, 42, 26, 12);
  EXPECT_FALSE(at::equal(out.index({at::indexing::Slice(), edge}), in.index({at::indexing::Slice(), edge}))) << "the edge was filled";

  // resolution=64 on a region of 160x112: filled at 64x45 (padded to 64x48) and scaled back.
  const std::string log = run_inpaint(clip, dir / "small.mkv", "box=20,10,120,90:resolution=64");
  EXPECT_NE(log.find("regions at most 64 px"), std::string::npos) << log;
  const at::Tensor small = rgb_frames(dir / "small.mkv", 160, 112), hole = rectangle(160, 112, 20, 10, 120, 90);
  EXPECT_TRUE(at::equal(small.index({at::indexing::Slice(), ~hole}), in.index({at::indexing::Slice(), ~hole})));
  EXPECT_FALSE(at::equal(small.index({at::indexing::Slice(), hole}), in.index({at::indexing::Slice(), hole})));
}

// MAT (tests/data/arch/mat-narrow: 128x128, checked against spandrel's MAT in arch_mat_test.cpp)
// through the same stage: a PNG and its mask give upstream's composite (the region with its
// context is the whole 128x128 frame: the network sees upstream's input), a burned-in box on a
// real clip goes with every other pixel kept, the region scaled to MAT's one size and back, as a
// pass and as a job of segments.
std::string mat_file() { return (arch_reference_dir() / "mat-narrow.pth").string(); }

TEST(InpaintStage, MatGivesUpstreamsCompositeOnAStillAndKeepsEveryOtherPixelOfAClip) {
  const auto dir = temp_dir("inpaint-mat");
  const weights::StateDict io = weights::load_weights(arch_reference_dir() / "mat-narrow.ref.safetensors");
  const at::Tensor input = io.at("input");  // [1, 4, 128, 128]
  write_png(input.narrow(1, 0, 3), dir / "in.png");
  write_png(input.narrow(1, 3, 1).expand({1, 3, 128, 128}), dir / "mask.png");
  auto r = framelift("run -y -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "out.png") +
                     " --progress none --pipeline 'inpaint:model=" + mat_file() + ":mask=" + (dir / "mask.png").string() + ":precision=fp32'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const at::Tensor got = read_png(dir / "out.png", 128, 128).mul(255).round();
  const at::Tensor diff = (got - io.at("output").clamp(0, 1).mul(255).round()).abs();
  std::printf("inpaint MAT PNG through run vs upstream: max %.0f code(s), %.3f%% exact\n", diff.max().item<double>(),
              100 * diff.eq(0).to(at::kFloat).mean().item<double>());
  EXPECT_LE(diff.max().item<double>(), 1.0);

  const fs::path clip = boxed_clip(dir);
  const std::string log = run_inpaint_with(mat_file(), clip, dir / "mat.mkv", "box=58,38,34,20");
  EXPECT_NE(log.find("regions scaled to 128x128"), std::string::npos) << log;
  const at::Tensor in = rgb_frames(clip, 160, 112), out = rgb_frames(dir / "mat.mkv", 160, 112);
  const at::Tensor hole = rectangle(160, 112, 58, 38, 34, 20);
  EXPECT_TRUE(at::equal(out.index({at::indexing::Slice(), ~hole}), in.index({at::indexing::Slice(), ~hole})));
  EXPECT_FALSE(at::equal(out.index({at::indexing::Slice(), hole}), in.index({at::indexing::Slice(), hole})));
  run_inpaint_with(mat_file(), clip, dir / "mat-job.mkv", "box=58,38,34,20", "--segment-frames 2");
  EXPECT_TRUE(at::equal(rgb_frames(dir / "mat-job.mkv", 160, 112), out)) << "a job of segments equals the pass";

  auto resolution = framelift("run -y -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "res.png") + " --pipeline 'inpaint:model=" +
                              mat_file() + ":box=1,1,8,8:resolution=256'");
  EXPECT_EQ(resolution.exit_code, 2) << resolution.output;
  EXPECT_NE(resolution.output.find("resolution= is LaMa's"), std::string::npos) << resolution.output;
  EXPECT_FALSE(fs::exists(dir / "res.png"));
  const PlannedStage mat = plan_first_stage_on_cpu(clip, "inpaint:model=" + mat_file() + ":box=58,38,34,20");
  EXPECT_EQ(mat.arch, "mat");
  EXPECT_GT(mat.seconds_per_frame, 0);
}

TEST(InpaintStage, ModelsInfoAndThePlannerKnowLama) {
  auto info = framelift("models info " + shell_quote(lama_file()));
  ASSERT_EQ(info.exit_code, 0) << info.output;
  const auto j = nlohmann::json::parse(info.output.substr(info.output.find('{')));
  EXPECT_EQ(j["native"]["arch"], "lama") << info.output;
  EXPECT_EQ(j["native"]["hyperparameters"]["blocks"], 2) << info.output;

  const auto dir = temp_dir("inpaint-plan");
  const fs::path clip = boxed_clip(dir);
  const auto planned = [&](const std::string& resolution) {
    const PlannedStage p = plan_first_stage_on_cpu(clip, "inpaint:model=" + lama_file() + ":box=1,1,8,8:resolution=" + resolution);
    EXPECT_EQ(p.arch, "lama");
    return p.seconds_per_frame;
  };
  const double whole = planned("512"), scaled = planned("64");
  EXPECT_GT(scaled, 0);
  EXPECT_LT(scaled, whole) << "a 64 px working size is priced below the whole 160x112 frame";
}

TEST(InpaintStage, AMissingMaskAndAnotherKindOfNetworkAreRefused) {
  const auto dir = temp_dir("inpaint-refused");
  write_png(real_frame(32, 24), dir / "in.png");
  const std::string head = "run -y -i " + shell_quote(dir / "in.png") + " -o " + shell_quote(dir / "out.png") + " --pipeline ";
  auto none = framelift(head + "'inpaint:model=" + lama_file() + "'");
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("mask=IMAGE|VIDEO or box=x,y,w,h"), std::string::npos) << none.output;
  const fs::path style = arch_reference_dir() / "fast_neural_style-w8.pth";
  auto other = framelift(head + "'inpaint:model=" + style.string() + ":box=1,1,4,4'");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("is a fast_neural_style network, not an inpainting one"), std::string::npos) << other.output;
  auto outside = framelift(head + "'inpaint:model=" + lama_file() + ":box=30,20,8,8'");
  EXPECT_EQ(outside.exit_code, 2) << outside.output;
  EXPECT_FALSE(fs::exists(dir / "out.png"));
}

}  // namespace
}  // namespace framelift::test
