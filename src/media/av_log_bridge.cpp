#include "media/av_log_bridge.h"

#include <cstdio>
#include <string>

extern "C" {
#include <libavutil/log.h>
}

#include "util/log.h"

namespace framelift::media {
namespace {

log::Level to_level(int av_level) {
  if (av_level <= AV_LOG_ERROR) return log::Level::Error;
  if (av_level <= AV_LOG_WARNING) return log::Level::Warn;
  if (av_level <= AV_LOG_INFO) return log::Level::Debug;  // libav's info is chatty: our debug
  return log::Level::Trace;
}

void callback(void* avcl, int av_level, const char* fmt, va_list args) {
  log::Level level = to_level(av_level);
  // libav reports recoverable decode problems as errors; framelift counts and reports them
  // itself (see Decoder), so they are shown only when the user asks for detail.
  if (level == log::Level::Error || level == log::Level::Warn) level = log::Level::Debug;
  if (!log::enabled(level)) return;
  char line[1024];
  int print_prefix = 1;
  av_log_format_line2(avcl, av_level, fmt, args, line, sizeof line, &print_prefix);
  std::string text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (!text.empty()) log::write(level, "ffmpeg: " + text);
}

}  // namespace

void install_av_log_bridge() { av_log_set_callback(callback); }

}  // namespace framelift::media
