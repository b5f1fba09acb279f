#pragma once
// A tiny leveled logger writing to stderr. Thread-safe: each message is written with one call.
// FFmpeg's own log is routed here by media/av_log_bridge.h so that the user sees one stream of
// messages, filtered by one level.
#include <string_view>

#include "util/str.h"

namespace framelift::log {

enum class Level { Trace = 0, Debug, Info, Warn, Error, Quiet };

void set_level(Level level);
Level level();
bool enabled(Level level);
void write(Level level, std::string_view message);
// While one is alive, this thread's info, debug and trace messages are dropped (warnings and errors
// are not): for work done on the user's behalf that is not theirs to read about, such as the one
// run of a network behind `models info` (FBCNN would name the JPEG quality of a random input).
class QuietScope {
 public:
  QuietScope();
  ~QuietScope();
  QuietScope(const QuietScope&) = delete;
  QuietScope& operator=(const QuietScope&) = delete;
};

// Parses "trace|debug|info|warn|error|quiet"; throws framelift::Error on anything else.
Level parse_level(std::string_view name);

template <class... Args>
void info(const Args&... args) {
  if (enabled(Level::Info)) write(Level::Info, str(args...));
}
template <class... Args>
void warn(const Args&... args) {
  if (enabled(Level::Warn)) write(Level::Warn, str(args...));
}
template <class... Args>
void debug(const Args&... args) {
  if (enabled(Level::Debug)) write(Level::Debug, str(args...));
}
template <class... Args>
void error(const Args&... args) {
  if (enabled(Level::Error)) write(Level::Error, str(args...));
}

}  // namespace framelift::log
