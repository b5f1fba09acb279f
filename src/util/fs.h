#pragma once
// Crash-safe file primitives: whatever sits under a final name is complete.
#include <filesystem>
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

// Writes `content` to `path` atomically (temp + fsync + rename + folder fsync).
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Same file on disk (both exist and share device and inode), or the same normalized path.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace framelift
