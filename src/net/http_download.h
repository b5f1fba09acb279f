#pragma once
// Downloads one URL to one file with libcurl, crash- and interruption-safe: the bytes go to
// "<dest>.part" next to the destination, a later call resumes that file with an HTTP Range
// request, and only a complete (and, when a hash is given, verified) file is renamed to `dest`.
// Whatever sits under the final name is therefore always whole.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace framelift::net {

struct DownloadOptions {
  // 64 hex digits (any case); empty skips the check. On mismatch the .part is deleted, so the
  // next attempt starts clean instead of resuming a corrupt prefix.
  std::string expected_sha256;
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(30)};
  // The transfer is abandoned (the .part kept for resuming) when it stays below
  // low_speed_bytes_per_s for low_speed_time; a stalled server cannot hang us forever.
  long low_speed_bytes_per_s = 1024;
  std::chrono::seconds low_speed_time{60};
  long max_redirects = 10;
  // Called with bytes present in the .part and the expected total (0 while unknown), at most
  // every 100 ms and once at the end. Runs on the calling thread.
  std::function<void(std::uint64_t done, std::uint64_t total)> on_progress;
  // Set from any thread to stop; download_file then throws Error(Interrupted) and keeps the .part.
  const std::atomic<bool>* cancel = nullptr;
};

struct DownloadResult {
  std::uint64_t bytes = 0;         // size of the final file
  std::uint64_t resumed_from = 0;  // bytes reused from an earlier .part (0: fresh download)
  std::string sha256;              // hex digest of the final file
};

// "<dest>.part": where download_file writes until the file is complete.
std::filesystem::path download_part_path(const std::filesystem::path& dest);

// Downloads `url` (http, https; redirects followed) to `dest`, replacing an existing file
// atomically (fsync, rename, folder fsync). Throws framelift::Error, one line naming the URL or
// file: Input for network and HTTP failures and hash mismatches, Output when the destination
// cannot be written, Interrupted when cancelled. A failed transfer keeps the .part for resuming.
DownloadResult download_file(const std::string& url, const std::filesystem::path& dest,
                             const DownloadOptions& options = {});

}  // namespace framelift::net
