#include "jobs/journal.h"

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>

#include "jobs/json_seal.h"
#include "net/sha256.h"
#include "util/crash_point.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::jobs {

void Journal::commit(SegmentRecord record, const fs::path& written) {
  std::error_code ec;
  record.bytes = int64_t(fs::file_size(written, ec));
  if (ec) throw Error(ErrorKind::Output, str(written.string(), ": segment vanished before commit (", ec.message(), ")"));
  record.sha256 = net::sha256_file(written);
  crash_point("journal");
  commit_file(written, dir_.segment_file(record.index));
  crash_point("journal");
  nlohmann::json j{{"index", record.index},         {"bytes", record.bytes},     {"sha256", record.sha256},
                         {"frames_in", record.frames_in}, {"frames_out", record.frames_out},
                         {"seconds", record.seconds},     {"worker", record.worker},
                         {"time_base", {record.time_base_num, record.time_base_den}},
                         {"packets", record.packets}};
  seal_json(j);
  write_file_atomic(dir_.record_file(record.index), j.dump(1) + "\n");
}

namespace {

// FFmpeg's AV_NOPTS_VALUE, without its headers in the journal.
constexpr int64_t AV_NOPTS_VALUE_ = INT64_MIN;

// What assembly relies on, for records written before seals (and as a second line behind them):
// a usable time base and decode times that only move forward (a packet count that differs from
// the frame count is refused by assembly itself).
std::string record_problem(const SegmentRecord& r) {
  if (r.time_base_num <= 0 || r.time_base_den <= 0) return str("time base ", r.time_base_num, "/", r.time_base_den);
  if (r.frames_in < 0 || r.frames_out < 0 || r.bytes < 0) return "negative counts";
  for (size_t i = 0; i < r.packets.size(); ++i) {
    if (r.packets[i][2] < 0) return str("negative duration at packet ", i);
    const int64_t dts = r.packets[i][1], before = i > 0 ? r.packets[i - 1][1] : AV_NOPTS_VALUE_;
    if (dts != AV_NOPTS_VALUE_ && before != AV_NOPTS_VALUE_ && dts < before) return str("decode times go back at packet ", i);
  }
  return "";
}

}  // namespace

std::optional<SegmentRecord> Journal::load(int index) const {
  std::ifstream in(dir_.record_file(index));
  if (!in) return std::nullopt;
  auto damaged = [&](const std::string& why) -> std::optional<SegmentRecord> {
    log::warn(dir_.record_file(index).string(), ": damaged journal record (", why, "); the segment will be redone");
    return std::nullopt;
  };
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (check_json_seal(j) == SealState::Broken) return damaged("its content does not match its seal");
    SegmentRecord r;
    r.index = j.at("index").get<int>();
    r.bytes = j.at("bytes").get<int64_t>();
    r.sha256 = j.at("sha256").get<std::string>();
    r.frames_in = j.at("frames_in").get<int64_t>();
    r.frames_out = j.at("frames_out").get<int64_t>();
    r.seconds = j.value("seconds", 0.0);
    r.worker = j.value("worker", "");
    r.time_base_num = j.at("time_base").at(0).get<int>();
    r.time_base_den = j.at("time_base").at(1).get<int>();
    r.packets = j.at("packets").get<std::vector<std::array<int64_t, 3>>>();
    if (r.index != index) return damaged(str("it describes segment ", r.index));
    if (const std::string problem = record_problem(r); !problem.empty()) return damaged(problem);
    return r;
  } catch (const nlohmann::json::exception&) {
    // Records are written atomically, so this is damage from outside; redo the segment.
    return damaged("unreadable");
  }
}

std::map<int, SegmentRecord> Journal::finished(bool verify) const {
  std::map<int, SegmentRecord> done;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_.journal_dir(), ec)) {
    const fs::path p = entry.path();
    if (p.extension() != ".json" || p.filename().string()[0] == '.') continue;
    int index = -1;
    try {
      index = std::stoi(p.stem().string());
    } catch (const std::exception&) {
      continue;
    }
    if (std::optional<SegmentRecord> r = finished(index, verify)) done[index] = *r;
  }
  return done;
}

std::optional<SegmentRecord> Journal::finished(int index, bool verify) const {
  std::optional<SegmentRecord> r = load(index);
  if (!r) return std::nullopt;
  const fs::path segment = dir_.segment_file(index);
  std::error_code ec;
  const auto size = fs::file_size(segment, ec);
  if (ec || int64_t(size) != r->bytes) {
    log::warn(segment.string(), ": missing or not the recorded size; the segment will be redone");
    return std::nullopt;
  }
  if (verify && net::sha256_file(segment) != r->sha256) {
    // The record goes: every later check (the workers' size-only one, assembly) must see the
    // segment as unfinished, or the damaged file is reused after all.
    log::warn(segment.string(), ": checksum differs from the journal; the segment will be redone");
    fs::remove(dir_.record_file(index), ec);
    return std::nullopt;
  }
  return r;
}

}  // namespace framelift::jobs
