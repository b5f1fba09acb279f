// The FFmpeg part of machine_report(): the versions of the libav* libraries framelift runs with
// (which may be newer than the headers it was built against) and which encoders they hold.
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libswscale/swscale.h>
}

#include "api/machine_parts.h"
#include "util/str.h"

namespace framelift::api {
namespace {

std::string version_text(unsigned v) { return str(AV_VERSION_MAJOR(v), ".", AV_VERSION_MINOR(v), ".", AV_VERSION_MICRO(v)); }

// -c's default and the codecs framelift's docs name (libx264 the default, libx265 and libsvtav1
// for smaller files, ffv1 for lossless intermediates), then the hardware encoders a GPU machine
// could offload to.
constexpr const char* kSoftware[] = {"libx264", "libx265", "libsvtav1", "ffv1"};
constexpr const char* kHardware[] = {"h264_nvenc", "hevc_nvenc", "av1_nvenc", "h264_vaapi", "hevc_vaapi",
                                     "av1_vaapi",  "h264_qsv",   "hevc_qsv",  "av1_qsv"};

}  // namespace

FfmpegReport read_ffmpeg() {
  FfmpegReport f;
  f.version = av_version_info();
  f.libavcodec = version_text(avcodec_version());
  f.libavformat = version_text(avformat_version());
  f.libavutil = version_text(avutil_version());
  f.libavfilter = version_text(avfilter_version());
  f.libswscale = version_text(swscale_version());
  for (const char* name : kSoftware) f.encoders.push_back({name, false, avcodec_find_encoder_by_name(name) != nullptr});
  for (const char* name : kHardware) f.encoders.push_back({name, true, avcodec_find_encoder_by_name(name) != nullptr});
  return f;
}

}  // namespace framelift::api
