#include "util/crash_point.h"

#include <csignal>
#include <cstdlib>
#include <string>

#include <atomic>

namespace framelift {
namespace {

struct Target {
  std::string name;
  long count = 0;
  std::atomic<long> seen{0};
};

const Target* parse() {
  const char* env = std::getenv("FRAMELIFT_CRASH_AT");
  if (!env || !*env) return nullptr;
  static Target target;
  std::string text = env;
  const size_t colon = text.rfind(':');
  target.name = text.substr(0, colon);
  target.count = colon == std::string::npos ? 1 : std::atol(text.c_str() + colon + 1);
  return &target;
}

}  // namespace

void crash_point(std::string_view name) {
  static const Target* target = parse();
  if (!target || name != target->name) return;
  auto* t = const_cast<Target*>(target);
  if (t->seen.fetch_add(1) + 1 == t->count) std::raise(SIGKILL);
}

}  // namespace framelift
