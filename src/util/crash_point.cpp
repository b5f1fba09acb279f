#include "util/crash_point.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <string>

#include <atomic>

namespace framelift {
namespace {

struct Target {
  std::string name;
  long count = 0;
  int error = EIO;
  std::atomic<long> seen{0};

  // True the count-th time `point` is passed.
  bool hit(std::string_view point) { return point == name && seen.fetch_add(1) + 1 == count; }
};

// NAME:N[:ERRNO] from the variable, or null when it is unset.
Target* parse(const char* variable) {
  const char* env = std::getenv(variable);
  if (!env || !*env) return nullptr;
  auto* target = new Target;  // lives as long as the process; read from any thread
  std::string text = env;
  const size_t colon = text.find(':');
  target->name = text.substr(0, colon);
  if (colon != std::string::npos) {
    target->count = std::atol(text.c_str() + colon + 1);
    if (const size_t second = text.find(':', colon + 1); second != std::string::npos)
      target->error = std::atoi(text.c_str() + second + 1);
  } else {
    target->count = 1;
  }
  return target;
}

// Read once, together: with neither variable set a point costs the static's guard check and two
// null tests.
struct CrashTargets {
  Target* kill = parse("FRAMELIFT_CRASH_AT");
  Target* stop = parse("FRAMELIFT_STOP_AT");
};

}  // namespace

void crash_point(std::string_view name) {
  static const CrashTargets armed;
  if (armed.kill && armed.kill->hit(name)) std::raise(SIGKILL);
  // raise() runs the handler on this thread before it returns, so the stop is requested exactly
  // here, as if the signal had come from outside at this instant.
  if (armed.stop && armed.stop->hit(name)) std::raise(SIGTERM);
}

int failure_point(std::string_view name) {
  static Target* target = parse("FRAMELIFT_FAIL_AT");
  return target && target->hit(name) ? target->error : 0;
}

}  // namespace framelift
