#include "support/joined_clips.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_paths.h"

namespace framelift::test {

namespace fs = std::filesystem;

fs::path ts_clip(const fs::path& dir, const std::string& name, const std::string& size, double start_s) {
  const fs::path clip = dir / (name + ".ts");
  std::string out;
  const int rc = run_command("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=" + size + ":rate=" +
                                 std::to_string(kJoinedRate) + " -f lavfi -i sine=frequency=440:sample_rate=48000 -ss " +
                                 std::to_string(start_s) + " -frames:v " + std::to_string(kJoinedFramesEach) +
                                 " -t 2 -c:v libx264 -preset ultrafast -g 12 -bf 0 -c:a aac -b:a 64k '" + clip.string() + "'",
                             &out);
  EXPECT_EQ(rc, 0) << out;
  return clip;
}

fs::path joined(const fs::path& dir, const fs::path& a, const fs::path& b) {
  const fs::path clip = dir / "joined.ts";
  std::ofstream o(clip, std::ios::binary);
  for (const fs::path& part : {a, b}) {
    std::ifstream i(part, std::ios::binary);
    o << i.rdbuf();
  }
  return clip;
}

}  // namespace framelift::test
