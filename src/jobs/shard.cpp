#include "jobs/shard.h"

#include <cstdlib>
#include <optional>

#include "util/error.h"
#include "util/str.h"

namespace framelift::jobs {
namespace {

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0) return std::nullopt;
  return int(n);
}

int parse_count(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < 0 || n > 1000000)
    throw Error(ErrorKind::Usage, str(what, ": '", text, "' is not a number"));
  return int(n);
}

}  // namespace

bool SegmentSelection::includes(int index, int total) const {
  if (index < first || (last >= 0 && index > last)) return false;
  if (shards <= 1) return true;
  // Contiguous blocks: shard k gets [k*total/N, (k+1)*total/N).
  const int64_t lo = int64_t(shard) * total / shards, hi = int64_t(shard + 1) * total / shards;
  return index >= lo && index < hi;
}

std::string SegmentSelection::describe() const {
  if (shards > 1) return str("shard ", shard, "/", shards);
  if (first > 0 || last >= 0) return str("segments ", first, "-", last >= 0 ? std::to_string(last) : std::string("end"));
  return "all segments";
}

SegmentSelection parse_shard(const std::string& text) {
  SegmentSelection s;
  const size_t slash = text.find('/');
  const std::string k = text.substr(0, slash);
  std::optional<int> n;
  if (slash != std::string::npos) n = parse_count(text.substr(slash + 1), "--shard " + text);
  if (k == "auto") {
    std::optional<int> id = env_int("SLURM_ARRAY_TASK_ID");
    if (id) {
      *id -= env_int("SLURM_ARRAY_TASK_MIN").value_or(0);
      if (!n) n = env_int("SLURM_ARRAY_TASK_COUNT");
    } else {
      id = env_int("JOB_COMPLETION_INDEX");
    }
    if (!id) throw Error(ErrorKind::Usage, "--shard auto: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set");
    if (!n) throw Error(ErrorKind::Usage, "--shard auto: the number of shards is unknown; write --shard auto/N");
    s.shard = *id;
  } else {
    if (!n) throw Error(ErrorKind::Usage, str("--shard ", text, ": write K/N, e.g. 0/4"));
    s.shard = parse_count(k, "--shard " + text);
  }
  s.shards = *n;
  if (s.shards < 1 || s.shard >= s.shards)
    throw Error(ErrorKind::Usage, str("--shard ", text, ": K must be below N (K counts from 0)"));
  return s;
}

SegmentSelection parse_segment_range(const std::string& text) {
  SegmentSelection s;
  const size_t dash = text.find('-');
  s.first = parse_count(text.substr(0, dash), "--segments " + text);
  s.last = dash == std::string::npos ? s.first : parse_count(text.substr(dash + 1), "--segments " + text);
  if (s.last < s.first) throw Error(ErrorKind::Usage, str("--segments ", text, ": the range is empty"));
  return s;
}

}  // namespace framelift::jobs
