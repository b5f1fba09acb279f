#include "server/store_retry.h"

#include <algorithm>
#include <exception>
#include <thread>

namespace framelift::server {

std::string write_with_retry(const std::function<void()>& write, const RetryPolicy& policy, const std::atomic<bool>* give_up) {
  std::string last;
  std::chrono::milliseconds wait = policy.first_wait;
  for (int attempt = 1;; ++attempt) {
    try {
      write();
      return "";
    } catch (const std::exception& e) {
      last = e.what();
    } catch (...) {
      last = "an unknown error";
    }
    if (attempt >= policy.attempts || (give_up && *give_up)) return last;
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, policy.max_wait);
  }
}

}  // namespace framelift::server
