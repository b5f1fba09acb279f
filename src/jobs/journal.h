#pragma once
// Which segments are finished. One small record per segment (journal/NNNNNN.json) rather than one
// shared file: workers on several machines finish segments at the same time, and a shared file
// would need a lock over NFS to avoid losing records. A record is written (temp + fsync +
// rename) only after its segment file is synced and renamed into place, so a record always
// describes a complete file; a segment file without a record is redone.
#include <cstdint>
#include <filesystem>
#include <array>
#include <map>
#include <vector>
#include <optional>
#include <string>

#include "jobs/job_dir.h"

namespace framelift::jobs {

struct SegmentRecord {
  int index = 0;
  int64_t bytes = 0;
  std::string sha256;
  int64_t frames_in = 0;   // input frames the segment covers
  int64_t frames_out = 0;  // frames it holds
  double seconds = 0;      // processing time (the cost meter adds these up across runs)
  std::string worker;
  // The encoder's timestamps of the segment's packets, {pts, dts, duration} in order (see
  // pipeline::RunReport::packet_times), restored when assembling.
  int time_base_num = 1, time_base_den = 1;
  std::vector<std::array<int64_t, 3>> packets;
};

class Journal {
 public:
  explicit Journal(JobDir dir) : dir_(std::move(dir)) {}

  // Moves a finished segment (written under JobDir::temp_dir) into place and records it; fills in
  // the record's size and checksum. After this returns, the segment survives any crash.
  void commit(SegmentRecord record, const std::filesystem::path& written);

  // The recorded segments whose file is present with the recorded size; with `verify`, also the
  // recorded SHA-256 (a resume re-reads every finished segment once). A segment that fails is
  // dropped from the result with a warning and will be redone; one that fails its SHA-256 also
  // loses its record, so that later size-only checks redo it too. A record that is damaged (its
  // seal, an impossible time base, timestamps that go back) counts as absent.
  std::map<int, SegmentRecord> finished(bool verify) const;
  // The same check for one segment.
  std::optional<SegmentRecord> finished(int index, bool verify) const;

  std::optional<SegmentRecord> load(int index) const;

 private:
  JobDir dir_;
};

}  // namespace framelift::jobs
