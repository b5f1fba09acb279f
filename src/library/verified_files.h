#pragma once
// Which files of an installed model were hashed, and against what: ".verified.json" in the model's
// folder holds, per file, its SHA-256 and the stat fields that any change to the file changes
// (size, modification and change times in nanoseconds, inode, device). Loading a model rehashes
// a file only when one of them differs, so the README's promise (every model file checked against
// its SHA-256) costs one hash per file change, not one per run. The change time cannot be set
// back by a user, so a same-size edit with its mtime restored is still seen.
#include <filesystem>
#include <string>

namespace framelift::library {

class VerifiedFiles {
 public:
  explicit VerifiedFiles(std::filesystem::path model_dir);

  // True when `file` was hashed to `sha256` and has not changed since.
  bool still_verified(const std::filesystem::path& file, const std::string& sha256) const;
  // Records that `file` hashed to `sha256` now. A cache folder we cannot write (shared,
  // read-only) is not an error: the file is then rehashed next time.
  void remember(const std::filesystem::path& file, const std::string& sha256) const;

 private:
  std::filesystem::path record_file() const { return dir_ / ".verified.json"; }
  std::filesystem::path dir_;
};

}  // namespace framelift::library
