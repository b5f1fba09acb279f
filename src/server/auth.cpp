#include "server/auth.h"

#include "util/log.h"

namespace framelift::server {

bool Authenticator::too_many(const std::string& client, std::chrono::steady_clock::time_point now) {
  auto& times = failures_[client];
  while (!times.empty() && now - times.front() > window_) times.pop_front();
  return int(times.size()) >= max_failures_;
}

Authenticator::Result Authenticator::check_token(const std::string& token, const std::string& client) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    if (too_many(client, now)) return {Outcome::TooMany, std::nullopt};
  }
  if (std::optional<User> user = store_.user_for_token(token)) return {Outcome::Ok, user};
  std::lock_guard lock(mutex_);
  failures_[client].push_back(now);
  log::warn("serve: refused an unknown token from ", client);
  return {Outcome::Refused, std::nullopt};
}

Authenticator::Result Authenticator::check(const Credentials& c) {
  const std::string prefix = "Bearer ";
  if (c.authorization.rfind(prefix, 0) == 0) return check_token(c.authorization.substr(prefix.size()), c.client);
  if (!c.session.empty()) {
    {
      std::lock_guard lock(mutex_);
      if (too_many(c.client, std::chrono::steady_clock::now())) return {Outcome::TooMany, std::nullopt};
    }
    auto s = store_.session_user(c.session);
    if (!s) return {Outcome::Refused, std::nullopt};  // expired or logged out: log in again
    if (c.changes && c.csrf != s->second) {
      log::warn("serve: refused a session request without its CSRF token from ", c.client);
      return {Outcome::NoCsrf, std::nullopt};
    }
    return {Outcome::Ok, s->first};
  }
  return {Outcome::Missing, std::nullopt};
}

}  // namespace framelift::server
