#pragma once
// The folders `framelift serve` may read inputs from (--media ROOT, in order). A client names a
// file by a path relative to a root; it is resolved with every symlink followed and must still
// lie inside that root, so neither `..` nor a link that points out of the root reaches a file
// outside (docs/server.md).
//
// Thread-safety: const after construction; any thread.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace framelift::server {

struct Resolved {
  enum class Status { Ok, Outside, Missing, Malformed } status = Status::Malformed;
  std::filesystem::path path;  // the canonical file, when Ok
  int root = 0;                // which root it is in
  std::string why;             // one line for a client, when not Ok
};

struct MediaEntry {
  std::string name;
  bool directory = false;
  uintmax_t size = 0;
};

class MediaRoots {
 public:
  // Each root must be an existing folder. Throws Error(Usage) naming the one that is not.
  explicit MediaRoots(const std::vector<std::filesystem::path>& roots);

  // `relative` in root `root`, or in the first root that has it when root is nullopt.
  Resolved resolve(const std::string& relative, std::optional<int> root) const;
  // The entries of a folder inside a root (relative "" is the root itself), folders first.
  std::optional<std::vector<MediaEntry>> list(const std::string& relative, int root, Resolved* why) const;

  size_t size() const { return roots_.size(); }
  const std::filesystem::path& root(int i) const { return roots_.at(size_t(i)); }

 private:
  Resolved resolve_in(const std::string& relative, int root) const;

  std::vector<std::filesystem::path> roots_;  // canonical
};

}  // namespace framelift::server
