#pragma once
// Crash-safe file primitives: whatever sits under a final name is complete.
#include <filesystem>
#include <optional>
#include <string_view>

namespace framelift {

// The temporary name an output is written under before commit_file: a hidden file in the same
// folder (so the final rename stays on one filesystem) that keeps the extension.
std::filesystem::path partial_path_for(const std::filesystem::path& final_path);

// Removes the temporary files partial_path_for left for `final_path` by processes of this
// machine that no longer run (killed before they could clean up). Returns how many.
int remove_orphaned_partials(const std::filesystem::path& final_path);

// fsyncs `temp`, renames it to `final_path` and fsyncs the folder. Throws Error(Output).
void commit_file(const std::filesystem::path& temp, const std::filesystem::path& final_path);

// Like commit_file, but never replaces a file at `final_path` (renameat2 RENAME_NOREPLACE, or
// link + unlink where the filesystem lacks it): false, with `temp` left in place, when one is there.
bool commit_file_no_replace(const std::filesystem::path& temp, const std::filesystem::path& final_path);

// Commits `temp` under a free name next to `final_path` ("NAME.framelift-N.EXT") and returns it:
// where a finished result goes when something else took its final name meanwhile.
std::filesystem::path commit_file_aside(const std::filesystem::path& temp, const std::filesystem::path& final_path);

// Device and inode of a file, to tell later whether the same file is still there; nullopt when
// there is none.
struct FileIdentity {
  unsigned long long device = 0, inode = 0;
  bool operator==(const FileIdentity&) const = default;
};
std::optional<FileIdentity> file_identity(const std::filesystem::path& path);

// Writes `content` to `path` atomically (temp + fsync + rename + folder fsync).
void write_file_atomic(const std::filesystem::path& path, std::string_view content);
// The same without replacing: false, and nothing written, when `path` exists.
bool write_file_no_replace(const std::filesystem::path& path, std::string_view content);

// Same file on disk (both exist and share device and inode), or the same normalized path.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// Whether `path` is `root` or below it, component by component (/media/a2 is not inside
// /media/a). Both as given: callers canonicalise first, so a link cannot lead out.
bool path_within(const std::filesystem::path& path, const std::filesystem::path& root);

}  // namespace framelift
