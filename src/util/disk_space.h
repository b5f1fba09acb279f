#pragma once
// Free space, and writes that found the disk full: what a job and the server check before they
// write, and how a failed write says the disk was full so that the job can add how much more it
// needs (docs/jobs.md, "Disk space").
//
// Thread-safety: every function may be called from any thread.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace framelift {

// Bytes an unprivileged process may still write on the file system holding `path` (statvfs:
// f_bavail * f_frsize). A path that does not exist yet is asked through the nearest folder above
// it that does (an output's folder before the run makes it). -1 when it cannot be asked.
int64_t free_disk_bytes(const std::filesystem::path& path);

// Whether `a` and `b` (or the nearest folders above them that exist) are on one file system: then
// what is written to both comes out of one free space.
bool same_file_system(const std::filesystem::path& a, const std::filesystem::path& b);

// What a failed write or sync says for `err` (an errno): a full disk (ENOSPC), a quota (EDQUOT)
// and a file size limit (EFBIG) in words a user can act on, the rest as strerror gives them.
std::string write_error_text(int err);

// Whether an error's message says the disk (or a quota) was full: the words write_error_text and
// the media layer's av_error_text use for ENOSPC and EDQUOT.
bool says_disk_full(std::string_view message);

// Bytes for people, in decimal units: "830 kB", "12.4 MB", "3.21 GB".
std::string human_bytes(double bytes);

}  // namespace framelift
