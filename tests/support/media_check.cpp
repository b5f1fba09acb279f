#include "support/media_check.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "support/test_paths.h"

namespace framelift::test {

std::vector<std::string> luma_md5s(const std::filesystem::path& video, const std::string& vf) {
  std::string out;
  EXPECT_EQ(run_command("ffmpeg -nostdin -v error -i '" + video.string() + "' -map 0:v -vf " + vf + "format=yuv420p,extractplanes=y -f framemd5 -",
                        &out),
            0)
      << out;
  std::vector<std::string> md5s;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] != '#') md5s.push_back(line.substr(line.rfind(',') + 1));
  return md5s;
}

std::vector<FrameHash> framemd5(const std::filesystem::path& file, const std::string& map, bool copy) {
  std::string out;
  std::string cmd = "ffmpeg -nostdin -v error -i '" + file.string() + "' -map " + map +
                    (copy ? " -c copy" : " -pix_fmt rgb48le") + " -f framemd5 -";
  int rc = run_command(cmd, &out);
  EXPECT_EQ(rc, 0) << cmd << "\n" << out;
  std::map<int, std::pair<int64_t, int64_t>> tb;
  std::vector<FrameHash> frames;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("#tb ", 0) == 0) {
      int idx;
      long long num, den;
      if (std::sscanf(line.c_str(), "#tb %d: %lld/%lld", &idx, &num, &den) == 3) tb[idx] = {num, den};
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    int idx;
    long long dts, pts, dur, size;
    char md5[64];
    if (std::sscanf(line.c_str(), "%d, %lld, %lld, %lld, %lld, %63s", &idx, &dts, &pts, &dur, &size, md5) != 6) continue;
    auto [num, den] = tb[idx];
    frames.push_back({double(pts) * double(num) / double(den), size, md5});
  }
  return frames;
}

nlohmann::json ffprobe(const std::filesystem::path& file) {
  std::string out;
  int rc = run_command("ffprobe -v error -print_format json -show_streams -show_format -show_chapters '" +
                           file.string() + "' 2>/dev/null",
                       &out);
  EXPECT_EQ(rc, 0) << out;
  return nlohmann::json::parse(out, nullptr, false);
}

int64_t count_frames(const std::filesystem::path& file) {
  std::string out;
  run_command("ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 '" +
                  file.string() + "' 2>/dev/null",
              &out);
  return std::atoll(out.c_str());
}

double video_psnr(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::string out;
  run_command("ffmpeg -nostdin -i '" + a.string() + "' -i '" + b.string() +
                  "' -lavfi \"[0:v][1:v]psnr\" -f null - 2>&1 | grep -o 'average:[0-9.inf]*'",
              &out);
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("average:([0-9.]+|inf)"))) return 0.0;
  return m[1] == "inf" ? 99.0 : std::stod(m[1]);
}

}  // namespace framelift::test
