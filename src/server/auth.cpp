#include "server/auth.h"

#include "util/log.h"

namespace framelift::server {

bool Authenticator::too_many(const std::string& client, std::chrono::steady_clock::time_point now) {
  auto& times = failures_[client];
  while (!times.empty() && now - times.front() > window_) times.pop_front();
  return int(times.size()) >= max_failures_;
}

Authenticator::Result Authenticator::check(const std::string& header, const std::string& client) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    if (too_many(client, now)) return {Outcome::TooMany, std::nullopt};
  }
  const std::string prefix = "Bearer ";
  if (header.rfind(prefix, 0) != 0) return {Outcome::Missing, std::nullopt};
  if (std::optional<User> user = store_.user_for_token(header.substr(prefix.size()))) return {Outcome::Ok, user};
  std::lock_guard lock(mutex_);
  failures_[client].push_back(now);
  log::warn("serve: refused an unknown token from ", client);
  return {Outcome::Refused, std::nullopt};
}

}  // namespace framelift::server
