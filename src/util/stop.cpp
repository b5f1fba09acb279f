#include "util/stop.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

#include "util/error.h"

namespace framelift {
namespace {

std::atomic<bool> g_stop{false};
// Written once before g_stop is set (release) and read after it is seen (acquire): no lock, so
// the signal handler may set it.
std::atomic<const char*> g_reason{nullptr};
thread_local const CancelFlag* t_cancel = nullptr;

void on_signal(int signo) {
  if (g_stop.load()) {
    // Second signal: the user means it. Only async-signal-safe calls here.
    const char msg[] = "framelift: second signal, exiting now\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(130);
  }
  request_stop(signo == SIGTERM ? "stopped by SIGTERM" : "stopped by SIGINT");
}

}  // namespace

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

void request_stop(const char* reason) {
  const char* expected = nullptr;
  g_reason.compare_exchange_strong(expected, reason);
  g_stop.store(true, std::memory_order_release);
}

void CancelFlag::cancel(const char* reason) {
  const char* expected = nullptr;
  reason_.compare_exchange_strong(expected, reason);
  cancelled_.store(true, std::memory_order_release);
}

const char* CancelFlag::reason() const {
  const char* r = reason_.load();
  return r ? r : "cancelled";
}

CancelScope::CancelScope(const CancelFlag* flag) : previous_(t_cancel) { t_cancel = flag; }
CancelScope::~CancelScope() { t_cancel = previous_; }
const CancelFlag* current_cancel_flag() noexcept { return t_cancel; }

bool stop_requested() noexcept {
  return g_stop.load(std::memory_order_acquire) || (t_cancel && t_cancel->cancelled());
}

std::string stop_reason() {
  if (g_stop.load(std::memory_order_acquire)) {
    const char* r = g_reason.load();
    return r ? r : "stop requested";
  }
  return t_cancel && t_cancel->cancelled() ? t_cancel->reason() : "stop requested";
}

void throw_if_stop_requested() {
  if (stop_requested()) throw Error(ErrorKind::Interrupted, stop_reason());
}

void clear_stop_request() {
  g_reason.store(nullptr);
  g_stop.store(false);
}

}  // namespace framelift
