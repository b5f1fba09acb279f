#include "server/auth.h"

#include "util/log.h"

namespace framelift::server {

Authenticator::Outcome Authenticator::failed(const std::string& client, const char* what) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  // Addresses with no recent failure are forgotten, so the map holds only the last window's.
  for (auto it = failures_.begin(); it != failures_.end();) {
    auto& times = it->second;
    while (!times.empty() && now - times.front() > window_) times.pop_front();
    it = times.empty() && it->first != client ? failures_.erase(it) : std::next(it);
  }
  auto& times = failures_[client];
  times.push_back(now);
  const bool over = int(times.size()) > max_failures_;
  // Past the limit one line a window, not one a request: a guesser cannot fill the log.
  if (!over || int(times.size()) == max_failures_ + 1) log::warn("serve: refused ", what, " from ", client);
  return over ? Outcome::TooMany : Outcome::Refused;
}

Authenticator::Result Authenticator::check_token(const std::string& token, const std::string& client) {
  if (std::optional<User> user = store_.user_for_token(token)) return {Outcome::Ok, user};
  return {failed(client, "an unknown token"), std::nullopt};
}

Authenticator::Result Authenticator::check(const Credentials& c) {
  const std::string prefix = "Bearer ";
  if (c.authorization.rfind(prefix, 0) == 0) return check_token(c.authorization.substr(prefix.size()), c.client);
  if (!c.session.empty()) {
    auto s = store_.session_user(c.session);
    if (!s) return {failed(c.client, "an unknown or expired session"), std::nullopt};  // log in again
    if (c.changes && c.csrf != s->second) {
      log::warn("serve: refused a session request without its CSRF token from ", c.client);
      return {Outcome::NoCsrf, std::nullopt};
    }
    return {Outcome::Ok, s->first};
  }
  return {Outcome::Missing, std::nullopt};
}

}  // namespace framelift::server
