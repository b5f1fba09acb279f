#include "library/archive_reader.h"

#include <archive_entry.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "net/sha256.h"
#include "util/error.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::library {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

ArchiveReader::ArchiveReader(const fs::path& file) : file_(file), archive_(archive_read_new()) {
  if (!archive_) throw Error(ErrorKind::Resource, str(file.string(), ": cannot initialise libarchive"));
  archive_read_support_filter_all(archive_.get());
  archive_read_support_format_tar(archive_.get());
  archive_read_support_format_gnutar(archive_.get());
  archive_read_support_format_zip(archive_.get());
  if (archive_read_open_filename(archive_.get(), file.c_str(), 1 << 16) != ARCHIVE_OK)
    throw Error(ErrorKind::Input, str(file.string(), ": not a readable archive (", archive_error_string(archive_.get()), ")"));
}

bool ArchiveReader::next() {
  archive_entry* entry = nullptr;
  int rc = archive_read_next_header(archive_.get(), &entry);
  if (rc == ARCHIVE_EOF) return false;
  if (rc < ARCHIVE_WARN)
    throw Error(ErrorKind::Input, str(file_.string(), ": corrupt archive (", archive_error_string(archive_.get()), ")"));
  const char* name = archive_entry_pathname(entry);
  path_ = name ? name : "";
  is_file_ = archive_entry_filetype(entry) == AE_IFREG;
  size_ = archive_entry_size_is_set(entry) ? std::uint64_t(archive_entry_size(entry)) : 0;
  return true;
}

std::string ArchiveReader::extract_to(const fs::path& dest, std::uint64_t max_bytes) {
  if (size_ > max_bytes) return "";  // the header already says so
  std::unique_ptr<std::FILE, FileCloser> out(std::fopen(dest.c_str(), "wb"));
  if (!out) throw Error(ErrorKind::Output, str(dest.string(), ": cannot write (", std::strerror(errno), ")"));
  net::Sha256 hash;
  char buf[1 << 16];
  std::uint64_t written = 0;
  for (;;) {
    la_ssize_t n = archive_read_data(archive_.get(), buf, sizeof buf);
    if (n == 0) break;
    if (n < 0)
      throw Error(ErrorKind::Input, str(file_.string(), ": ", path_, ": corrupt archive entry (",
                                        archive_error_string(archive_.get()), ")"));
    // The header's size can lie (or be absent); the stream is checked too.
    written += std::uint64_t(n);
    if (written > max_bytes) return "";
    hash.update(buf, size_t(n));
    if (std::fwrite(buf, 1, size_t(n), out.get()) != size_t(n))
      throw Error(ErrorKind::Output, str(dest.string(), ": write failed (", std::strerror(errno), ")"));
  }
  if (std::fflush(out.get()) != 0) throw Error(ErrorKind::Output, str(dest.string(), ": write failed (", std::strerror(errno), ")"));
  return hash.hex();
}

}  // namespace framelift::library
