#pragma once
// Who a request comes from: `Authorization: Bearer TOKEN` looked up by its hash. Failed attempts
// are logged and counted per client address; an address with too many recent failures is refused
// before its token is even looked at (HTTP 429), so tokens cannot be guessed at speed.
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
  enum class Outcome { Ok, Missing, Refused, TooMany };
  struct Result {
    Outcome outcome;
    std::optional<User> user;
  };

  explicit Authenticator(Store& store, int max_failures = 10, std::chrono::seconds window = std::chrono::seconds(60))
      : store_(store), max_failures_(max_failures), window_(window) {}

  Result check(const std::string& authorization_header, const std::string& client);

 private:
  bool too_many(const std::string& client, std::chrono::steady_clock::time_point now);

  Store& store_;
  int max_failures_;
  std::chrono::seconds window_;
  std::mutex mutex_;
  std::map<std::string, std::deque<std::chrono::steady_clock::time_point>> failures_;
};

}  // namespace framelift::server
