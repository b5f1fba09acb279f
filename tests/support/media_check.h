#pragma once
// Independent checks on media files through the ffmpeg/ffprobe CLIs (Debian's), so tests do not
// verify framelift's output with framelift's own reader.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace framelift::test {

struct FrameHash {
  double pts_s;      // presentation time in seconds
  int64_t size;
  std::string md5;
};

// `ffmpeg -i FILE -map MAP [-c copy] -f framemd5`: decoded frames (copy=false) or packets
// (copy=true) of the mapped stream, in file order, with pts in seconds.
std::vector<FrameHash> framemd5(const std::filesystem::path& file, const std::string& map, bool copy);

// The luma plane's MD5 per decoded frame of the first video stream, after the ffmpeg filter chain
// `vf` (empty, or ending in a comma: "scale=iw*2:ih*2:flags=neighbor,").
std::vector<std::string> luma_md5s(const std::filesystem::path& video, const std::string& vf);

// ffprobe -show_streams -show_format -show_chapters as JSON.
nlohmann::json ffprobe(const std::filesystem::path& file);

// Average PSNR in dB (ffmpeg's psnr filter, all planes) of video b against video a, frame by
// frame; 99 for identical videos, 0 when ffmpeg cannot compare them.
double video_psnr(const std::filesystem::path& a, const std::filesystem::path& b);

// Number of decodable video frames counted by ffprobe.
int64_t count_frames(const std::filesystem::path& file);

}  // namespace framelift::test
