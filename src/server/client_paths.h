#pragma once
// Error text on its way to a client: the server's own paths do not leave it. A message names a
// file the way the client named it (an upload by its name, a media file relative to its root);
// any other absolute path becomes "<server path>". libavfilter, libtorch and the stages write
// absolute paths into their errors; this is the one place that rewrites them (docs/server.md).
//
// Thread-safety: a value; rewrite() is const.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace framelift::server {

class ClientPaths {
 public:
  // A file or folder the client knows as `shown` ("" for a media root: what is in it shows
  // relative to it, "clips/a.mkv").
  void add(const std::filesystem::path& server_path, const std::string& shown);

  // `message` with every known path replaced by what the client calls it, then every other
  // absolute path replaced by "<server path>".
  std::string rewrite(const std::string& message) const;

 private:
  std::vector<std::pair<std::string, std::string>> known_;  // longest first
};

}  // namespace framelift::server
