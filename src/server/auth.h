#pragma once
// Who a request comes from: `Authorization: Bearer TOKEN` (API clients) or the page's session
// cookie, both looked up by their hash. A request on a session cookie that changes anything (not
// GET) must carry the session's CSRF token in X-CSRF-Token, which another site's page cannot
// read, so it cannot make a logged-in browser act for it (the cookie is SameSite=Strict too).
//
// Failed attempts are logged and counted per client address, and an address past the limit has
// its unknown credentials answered 429 instead of 401. A known token or live session is never
// refused for what others sent: every user reaches the server as 127.0.0.1 through `ssh -L`, so
// a limit that refused valid tokens would let any local process, or a web page posting to
// localhost, lock every user out. Tokens carry 256 random bits, so guessing one is hopeless at
// any rate; the limit only bounds what a guesser costs (log lines, lookups).
//
// Thread-safety: any thread.
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "server/store.h"

namespace framelift::server {

class Authenticator {
 public:
  enum class Outcome { Ok, Missing, Refused, TooMany, NoCsrf };
  struct Result {
    Outcome outcome;
    std::optional<User> user;
  };
  struct Credentials {
    std::string authorization;  // the Authorization header
    std::string session;        // the fl_session cookie's value
    std::string csrf;           // the X-CSRF-Token header
    bool changes = false;       // not a GET or HEAD
    std::string client;         // the peer's address
  };

  explicit Authenticator(Store& store, int max_failures = 10, std::chrono::seconds window = std::chrono::seconds(60))
      : store_(store), max_failures_(max_failures), window_(window) {}

  Result check(const Credentials& c);
  // A token given to log in (counted like a refused header when unknown).
  Result check_token(const std::string& token, const std::string& client);

 private:
  // Records a failure from `client`: Refused, or TooMany past the limit.
  Outcome failed(const std::string& client, const char* what);

  Store& store_;
  int max_failures_;
  std::chrono::seconds window_;
  std::mutex mutex_;
  std::map<std::string, std::deque<std::chrono::steady_clock::time_point>> failures_;
};

}  // namespace framelift::server
