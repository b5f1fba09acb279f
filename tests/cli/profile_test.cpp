// `framelift profile` on real footage with real weights: the sample really comes from the
// places it says, and the manifest carries what the planner and people need.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "cli/profile_support.h"
#include "support/cpu_flags.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace framelift::test {
namespace {

// PSNR of output frames [from, from+n) against input frames [src_from, src_from+n).
double psnr(const fs::path& out, int from, const fs::path& src, int src_from, int n) {
  std::string text;
  run_command("ffmpeg -nostdin -i " + shell_quote(out) + " -i " + shell_quote(src) +
                  " -lavfi \"[0:v]trim=start_frame=" + std::to_string(from) + ":end_frame=" + std::to_string(from + n) +
                  ",setpts=N/TB/25,format=gbrp[a];[1:v]trim=start_frame=" + std::to_string(src_from) +
                  ":end_frame=" + std::to_string(src_from + n) + ",setpts=N/TB/25,format=gbrp[b];[a][b]psnr\" -f null - 2>&1 |"
                  " grep -o 'average:[0-9.inf]*'",
              &text);
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return 0;
  return text.substr(colon + 1).rfind("inf", 0) == 0 ? 99 : std::stod(text.substr(colon + 1));
}

TEST(ProfileCommand, TheSampleComesFromStretchesSpreadOverTheClip) {
  const fs::path dir = temp_dir("profile-sample"), clip = footage(dir, 240, 176, 48), kept = dir / "sample.mkv";
  // 6 frames in 2 stretches of 3: frames 0-2 and 45-47 (the second reached by a seek to frame 36).
  const json m = profile(clip, "resize:w=240:h=176", "--frames 6 --stretches 2 --warmup 0 --keep-output " + shell_quote(kept),
                         dir / "m.json");
  ASSERT_EQ(m["sample"]["stretches"].size(), 2u);
  EXPECT_EQ(m["sample"]["frames_in"], 6);
  EXPECT_EQ(m["sample"]["frames_out"], 6);
  const double start = psnr(kept, 0, clip, 0, 3), end = psnr(kept, 3, clip, 45, 3), wrong = psnr(kept, 3, clip, 3, 3);
  std::printf("sample vs source: frames 0-2 %.1f dB, 3-5 vs 45-47 %.1f dB, 3-5 vs 3-5 %.1f dB\n", start, end, wrong);
  EXPECT_GT(start, 40);
  EXPECT_GT(end, 40);
  EXPECT_LT(wrong, 30);  // the discriminating check: the middle of the clip is really skipped
  // Decoding from the keyframe before frame 45 decodes more than is measured.
  EXPECT_GT(m["sample"]["frames_decoded"].get<int>(), 6);
}

TEST(ProfileCommand, ManifestOfARealUpscaleAndInterpolationChain) {
  if (!have_weights()) GTEST_SKIP() << "npm weights missing (scripts/setup.sh)";
  const fs::path dir = temp_dir("profile-chain"), clip = footage(dir, 160, 120, 48);
  const json m = profile(clip, "upscale:model=realesr-animevideov3-x2,interpolate:model=rife-v4.6:factor=2",
                         "--frames 6 --stretches 2", dir / "chain.json");
  EXPECT_EQ(m["kind"], "framelift-profile");
  EXPECT_EQ(m["device"]["id"], "cpu");
  // What `run` uses here by default: bf16 where the CPU multiplies it natively, else fp32.
  EXPECT_EQ(m["precision"], cpu_flags_have_bf16() ? "bf16" : "fp32");
  EXPECT_FALSE(m["versions"]["libtorch"].get<std::string>().empty());
  EXPECT_FALSE(m["versions"]["ffmpeg"].get<std::string>().empty());
  EXPECT_EQ(m["sample"]["output_width"], 320);
  EXPECT_EQ(m["sample"]["frames_in"], 6);
  const int out = m["sample"]["frames_out"];
  EXPECT_GE(out, 10);
  EXPECT_LE(out, 12);
  ASSERT_EQ(m["stages"].size(), 2u);
  const json& up = m["stages"][0];
  const json& rife = m["stages"][1];
  EXPECT_EQ(up["name"], "upscale");
  EXPECT_EQ(up["inference_calls"], 6);  // whole frames: one call each
  EXPECT_EQ(up["inference_pixels"], 6 * 160 * 120);
  EXPECT_EQ(rife["name"], "interpolate");
  EXPECT_GE(rife["inference_calls"].get<int>(), 4);  // the new frames; a join between stretches is a cut, held
  // Activations of a 160x120 frame through a 64-channel network are megabytes, not bytes or gigabytes.
  EXPECT_GT(up["peak_activation_bytes"].get<double>(), 160 * 120 * 64 * 4);
  EXPECT_LT(up["peak_activation_bytes"].get<double>(), 2e9);
  EXPECT_GT(up["achieved_gflops_per_s"].get<double>(), 0.5);
  // Against the CPU's dense peak (cores x clock x FMA width from /proc/cpuinfo): a fraction.
  EXPECT_GT(m["device"]["peak_gflops_per_s"].get<double>(), 1);
  EXPECT_GT(up["fraction_of_peak"].get<double>(), 0.0);
  EXPECT_LT(up["fraction_of_peak"].get<double>(), 1.5);
  ASSERT_EQ(m["runs"].size(), 2u);
  EXPECT_EQ(m["runs"][0]["arch"], "srvgg_compact");
  EXPECT_EQ(m["runs"][1]["arch"], "rife");
  for (const char* s : {"decode", "convert", "encode", "1:inference", "2:inference", "1:stage", "encode.idle"})
    EXPECT_TRUE(m["sections"].contains(s)) << s << " missing from " << m["sections"].dump();
  const double ratio = m["fps"]["end_to_end_vs_inference"];
  EXPECT_GT(ratio, 0.3);
  EXPECT_LE(ratio, 1.0);
  EXPECT_GT(m["memory"]["peak_host_bytes"].get<double>(), 50e6);
  EXPECT_FALSE(m["encoders"].empty());

  // The same as a table for people.
  auto r = framelift("--log-level warn profile -i " + shell_quote(clip) +
                     " --pipeline upscale:model=realesr-animevideov3-x2 --frames 2 --stretches 1 --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("stage 1 upscale"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GFLOP/s"), std::string::npos) << r.output;
}

TEST(ProfileCommand, BadInputsAreClearErrors) {
  const fs::path dir = temp_dir("profile-bad");
  auto r = framelift("profile -i " + shell_quote(dir / "missing.mkv") + " --pipeline resize:scale=2");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("missing.mkv"), std::string::npos) << r.output;
  r = framelift("profile -i " + shell_quote(media("real_megamind.mkv")) + " --pipeline resize:scale=2 --frames 0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const fs::path existing = dir / "m.json";
  std::ofstream(existing) << "{}";
  r = framelift("profile -i " + shell_quote(media("real_megamind.mkv")) + " --pipeline resize:scale=2 -o " + shell_quote(existing));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("already exists"), std::string::npos) << r.output;
  std::ifstream in(existing);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "{}");  // never overwritten without -y
}

}  // namespace
}  // namespace framelift::test
