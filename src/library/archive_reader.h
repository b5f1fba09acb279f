#pragma once
// Reads the entries of an archive (npm's .tgz, upstream .zip releases) with libarchive, one pass,
// streaming: a 200 MB tarball is never held in memory or unpacked as a whole.
#include <archive.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace framelift::library {

class ArchiveReader {
 public:
  // Throws Error(Input, "<file>: ...") when the file cannot be opened as an archive.
  explicit ArchiveReader(const std::filesystem::path& file);

  // Moves to the next entry; false at the end. Throws Error(Input) for a corrupt archive.
  bool next();
  const std::string& path() const { return path_; }  // path inside the archive ("package/x.bin")
  bool is_file() const { return is_file_; }
  std::uint64_t size() const { return size_; }

  // Writes the current entry's bytes to `dest` and returns their SHA-256. Callable once per entry.
  // An entry that holds more than `max_bytes` (the catalog's declared size) returns "" and stops
  // writing there: a 1 MB tarball of zeros must not write gigabytes into the cache's staging.
  std::string extract_to(const std::filesystem::path& dest, std::uint64_t max_bytes);

 private:
  struct Closer {
    void operator()(archive* a) const { archive_read_free(a); }
  };
  std::filesystem::path file_;
  std::unique_ptr<archive, Closer> archive_;
  std::string path_;
  bool is_file_ = false;
  std::uint64_t size_ = 0;
};

}  // namespace framelift::library
