#include "server/client_paths.h"

#include <algorithm>
#include <cstring>

namespace framelift::server {
namespace fs = std::filesystem;
namespace {

// Where an absolute path may start in a message: its start, or after a space, quote, '(' or '='.
bool path_may_start(const std::string& s, size_t i) {
  return s[i] == '/' && (i == 0 || std::strchr(" \t'\"(=[,<", s[i - 1]) != nullptr);
}

// Where it ends: whitespace, a closing quote or bracket, ',' ';', or ':' before a space or the end.
size_t path_end(const std::string& s, size_t i) {
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (std::strchr(" \t\n'\")],;>", c)) break;
    if (c == ':' && (i + 1 == s.size() || s[i + 1] == ' ')) break;
  }
  return i;
}

}  // namespace

void ClientPaths::add(const fs::path& server_path, const std::string& shown) {
  std::error_code ec;
  for (const fs::path& p : {server_path, fs::weakly_canonical(server_path, ec)}) {
    const std::string s = p.lexically_normal().string();
    if (s.empty() || s == "/") continue;
    // A folder: what is inside it shows relative to `shown`; the folder itself as `shown` or ".".
    const std::string folder = s.back() == '/' ? s : s + "/";
    known_.emplace_back(folder, shown.empty() ? "" : shown + "/");
    known_.emplace_back(folder.substr(0, folder.size() - 1), shown.empty() ? "." : shown);
  }
  std::stable_sort(known_.begin(), known_.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::string ClientPaths::rewrite(const std::string& message) const {
  std::string out;
  // Known paths first, each only where an absolute path may start.
  for (size_t i = 0; i < message.size();) {
    if (path_may_start(message, i)) {
      auto hit = std::find_if(known_.begin(), known_.end(), [&](const auto& k) { return message.compare(i, k.first.size(), k.first) == 0; });
      if (hit != known_.end()) {
        const size_t end = i + hit->first.size();
        // A folder's name alone must end there ("/srv/media" is not "/srv/media2").
        const bool whole = hit->first.back() == '/' || end == message.size() || path_end(message, end) == end;
        if (whole) {
          out += hit->second;
          i = end;
          continue;
        }
      }
      const size_t end = path_end(message, i);
      out += "<server path>";
      i = end;
      continue;
    }
    out += message[i++];
  }
  return out;
}

}  // namespace framelift::server
