#include "library/verified_files.h"

#include <sys/stat.h>

#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/fs.h"

namespace fs = std::filesystem;

namespace framelift::library {
namespace {

int64_t nanoseconds(const timespec& t) { return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

std::optional<nlohmann::json> stat_key(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return std::nullopt;
  return nlohmann::json{{"size", int64_t(st.st_size)},         {"mtime_ns", nanoseconds(st.st_mtim)},
                        {"ctime_ns", nanoseconds(st.st_ctim)}, {"inode", uint64_t(st.st_ino)},
                        {"device", uint64_t(st.st_dev)}};
}

nlohmann::json read_record(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

}  // namespace

VerifiedFiles::VerifiedFiles(fs::path model_dir) : dir_(std::move(model_dir)) {}

bool VerifiedFiles::still_verified(const fs::path& file, const std::string& sha256) const {
  const nlohmann::json record = read_record(record_file());
  const auto it = record.find(file.filename().string());
  if (it == record.end() || !it->is_object()) return false;
  const auto key = stat_key(file);
  if (!key) return false;
  nlohmann::json expected = *key;
  expected["sha256"] = sha256;
  return *it == expected;
}

void VerifiedFiles::remember(const fs::path& file, const std::string& sha256) const {
  auto key = stat_key(file);
  if (!key) return;
  (*key)["sha256"] = sha256;
  nlohmann::json record = read_record(record_file());
  record[file.filename().string()] = *key;
  try {
    write_file_atomic(record_file(), record.dump(1) + "\n");
  } catch (const Error&) {
    // Read-only cache: correct, only slower (the next load hashes again).
  }
}

}  // namespace framelift::library
