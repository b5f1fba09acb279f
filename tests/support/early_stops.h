#pragma once
// What the early-stop tests share (tests/cli, tests/api, tests/server: early_stops_test.cpp,
// issue 29): the early points of a job where each stops it, once by SIGKILL and once by SIGTERM,
// before it is resumed and compared with one plain pass. The points are util/crash_point.h's; the
// job is tiny_20f.mkv (20 frames, 64x48, FFV1) resized in segments of 4 frames, so 5 segments
// and 20 packets to assemble.
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

namespace framelift::test {

struct EarlyPoint {
  std::string at;    // NAME:N, as FRAMELIFT_CRASH_AT and FRAMELIFT_STOP_AT take it
  std::string what;  // for the failure message
};

inline void PrintTo(const EarlyPoint& point, std::ostream* os) { *os << point.at; }  // gtest's messages

inline const std::vector<EarlyPoint>& early_points() {
  static const std::vector<EarlyPoint> points = {
      {"plan:1", "before the plan is written"},
      {"planned:1", "just after the plan is written"},
      {"encoder-open:1", "while the first segment's encoder opens"},
      {"packet:1", "after the first segment's first packet"},
      {"journal:1", "committing the first segment, before its rename"},
      {"journal:2", "committing the first segment, before its journal record"},
      {"assemble:10", "halfway through assembly"},
  };
  return points;
}

enum class StopSignal { Kill, Term };
inline void PrintTo(StopSignal s, std::ostream* os) { *os << (s == StopSignal::Kill ? "SIGKILL" : "SIGTERM"); }

// The variable that makes the process stop at a point in that way.
inline std::string stop_variable(StopSignal s) { return s == StopSignal::Kill ? "FRAMELIFT_CRASH_AT" : "FRAMELIFT_STOP_AT"; }
inline std::string signal_name(StopSignal s) { return s == StopSignal::Kill ? "SIGKILL" : "SIGTERM"; }

// One test per point and signal: "encoder_open_1_SIGKILL", as gtest names its parameters.
inline std::string early_stop_name(const EarlyPoint& point, StopSignal s) {
  std::string name = point.at + "_" + signal_name(s);
  for (char& c : name)
    if (c == ':' || c == '-') c = '_';
  return name;
}
using EarlyStop = std::tuple<EarlyPoint, StopSignal>;
template <class Info>
std::string early_stop_name(const Info& info) {
  return early_stop_name(std::get<0>(info.param), std::get<1>(info.param));
}

// The job every interface runs: the pipeline and its encoder, in segments of 4 frames.
constexpr const char* kEarlyStopPipeline = "resize:scale=2";
constexpr int kEarlyStopSegmentFrames = 4;
constexpr int kEarlyStopFrames = 20;

}  // namespace framelift::test
