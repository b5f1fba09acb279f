#include "util/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include <unistd.h>

#include "util/error.h"

namespace framelift::log {
namespace {
std::atomic<Level> g_level{Level::Info};
std::mutex g_mutex;
thread_local int t_quiet = 0;  // open QuietScopes on this thread

const char* prefix(Level level) {
  switch (level) {
    case Level::Trace: return "trace: ";
    case Level::Debug: return "debug: ";
    case Level::Info: return "";
    case Level::Warn: return "warning: ";
    case Level::Error: return "error: ";
    case Level::Quiet: return "";
  }
  return "";
}
}  // namespace

void set_level(Level level) { g_level = level; }
Level level() { return g_level; }
bool enabled(Level l) { return l >= g_level.load() && l != Level::Quiet && (t_quiet == 0 || l >= Level::Warn); }

QuietScope::QuietScope() { ++t_quiet; }
QuietScope::~QuietScope() { --t_quiet; }

void write(Level l, std::string_view message) {
  std::lock_guard lock(g_mutex);
  // A live progress bar may own the current terminal line; clear it before the message.
  static const bool tty = isatty(STDERR_FILENO);
  std::fprintf(stderr, "%s%s%.*s\n", tty ? "\r\033[K" : "", prefix(l), int(message.size()),
               message.data());
}

Level parse_level(std::string_view name) {
  if (name == "trace") return Level::Trace;
  if (name == "debug") return Level::Debug;
  if (name == "info") return Level::Info;
  if (name == "warn" || name == "warning") return Level::Warn;
  if (name == "error") return Level::Error;
  if (name == "quiet") return Level::Quiet;
  throw Error(ErrorKind::Usage, str("unknown log level '", name, "' (trace|debug|info|warn|error|quiet)"));
}

}  // namespace framelift::log
