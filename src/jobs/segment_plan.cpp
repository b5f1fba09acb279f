#include "jobs/segment_plan.h"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "jobs/json_seal.h"
#include "media/av_ptr.h"
#include "media/demuxer.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::jobs {
namespace {

// Long enough that per-segment costs (a seek, a keyframe, the encoder's start) stay small; short
// enough that a reclaimed instance loses little: on a GPU, seconds of work.
constexpr double kDefaultSegmentSeconds = 10;

// Where each segment starts (frame indices), from the target length and the keyframes.
std::vector<int64_t> choose_starts(const std::vector<int64_t>& pts, const std::vector<int64_t>& keyframes,
                                   int64_t segment_frames) {
  std::vector<int64_t> starts{0};
  const int64_t n = int64_t(pts.size());
  const int64_t slack = segment_frames / 4;
  while (true) {
    const int64_t target = starts.back() + segment_frames;
    if (target >= n) break;
    // The keyframe closest to the target within the slack, if any.
    int64_t best = target, best_distance = slack + 1;
    const int64_t lo = std::max(starts.back() + 1, target - slack), hi = std::min(n - 1, target + slack);
    auto it = std::lower_bound(keyframes.begin(), keyframes.end(), pts[lo]);
    for (; it != keyframes.end() && *it <= pts[hi]; ++it) {
      const int64_t index = std::lower_bound(pts.begin(), pts.end(), *it) - pts.begin();
      if (std::abs(index - target) < best_distance) best = index, best_distance = std::abs(index - target);
    }
    // A last segment shorter than a quarter is merged into the one before.
    if (n - best < std::max<int64_t>(1, slack)) break;
    starts.push_back(best);
  }
  return starts;
}

std::string first_line_of(const std::string& text) { return text.substr(0, text.find('\n')); }

Error mid_file_stream(const std::string& input, const AVFormatContext* format, int index) {
  const char* kind = av_get_media_type_string(format->streams[index]->codecpar->codec_type);
  return Error(ErrorKind::Input,
               str(input, ": ", kind ? kind : "data", " stream #", index, " starts mid-file (after the streams listed at the start), ",
                   "so its packets cannot be copied; remux it so every stream is listed first, e.g. ffmpeg -probesize 2G ",
                   "-analyzeduration 2G -i INPUT -map 0 -c copy fixed.mkv"));
}

}  // namespace

int64_t SegmentPlan::start_pts(size_t i) const {
  if (i >= segments.size()) return INT64_MAX;
  return frame_pts[segments[i].first_frame];
}

int64_t SegmentPlan::keyframe_at_or_before(int64_t pts) const {
  auto it = std::upper_bound(keyframe_pts.begin(), keyframe_pts.end(), pts);
  if (it == keyframe_pts.begin()) return frame_pts.empty() ? 0 : frame_pts.front();
  return *std::prev(it);
}

SegmentPlan plan_segments(const std::string& input, int64_t segment_frames, int64_t max_frames) {
  media::Demuxer demux(input);
  const int vidx = demux.video_index();
  SegmentPlan plan;
  plan.time_base = demux.video_stream()->time_base;
  media::PacketPtr pkt = media::make_packet();
  bool timestamps_usable = true;
  // An attachment (a font, cover art in Matroska) has no packets: its file is the extradata.
  for (unsigned i = 0; i < demux.format()->nb_streams; ++i)
    if (demux.format()->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_ATTACHMENT)
      plan.other_stream_bytes += demux.format()->streams[i]->codecpar->extradata_size;
  // Streams the demuxer adds while reading were not there when its streams were listed: an
  // output is set up from that list, so their packets would be dropped without a word.
  const unsigned declared = demux.format()->nb_streams;
  plan.other_packets.emplace();
  while (demux.read(pkt.get())) {
    if (pkt->stream_index != vidx) {
      if (unsigned(pkt->stream_index) >= declared) throw mid_file_stream(input, demux.format(), pkt->stream_index);
      plan.other_stream_bytes += pkt->size;
      ++(*plan.other_packets)[pkt->stream_index];
      continue;
    }
    if (pkt->flags & AV_PKT_FLAG_DISCARD) continue;
    if (pkt->pts == AV_NOPTS_VALUE) {
      timestamps_usable = false;
      plan.frame_pts.push_back(plan.frame_pts.empty() ? 0 : plan.frame_pts.back() + 1);
      continue;
    }
    plan.frame_pts.push_back(pkt->pts);
    if (pkt->flags & AV_PKT_FLAG_KEY) plan.keyframe_pts.push_back(pkt->pts);
  }
  if (plan.frame_pts.empty())
    throw Error(ErrorKind::Input, str(input, demux.ended_early() ? ": truncated or unreadable before the first frame"
                                                                  : ": the video stream has no frames"));
  std::sort(plan.frame_pts.begin(), plan.frame_pts.end());
  std::sort(plan.keyframe_pts.begin(), plan.keyframe_pts.end());
  if (std::adjacent_find(plan.frame_pts.begin(), plan.frame_pts.end()) != plan.frame_pts.end()) timestamps_usable = false;
  if (max_frames > 0 && int64_t(plan.frame_pts.size()) > max_frames) {
    plan.frame_pts.resize(size_t(max_frames));
  } else {
    media::check_video_complete(demux, plan.frame_pts.back());
  }

  std::vector<int64_t> starts{0};
  if (!timestamps_usable) {
    log::warn(input, ": missing or repeated timestamps; the job runs as one segment (resumable only as a whole)");
  } else if (demux.timeline_mended()) {
    // A seek lands on the raw timestamps, which repeat after a reset: only reading from the
    // start finds a frame by its joined time.
    log::warn(input, ": its timestamps go back (re-timed); the job runs as one segment (resumable only as a whole)");
  } else {
    if (segment_frames <= 0) {
      const AVRational rate = av_guess_frame_rate(demux.format(), demux.video_stream(), nullptr);
      segment_frames = rate.num > 0 ? std::max<int64_t>(1, int64_t(kDefaultSegmentSeconds * av_q2d(rate) + 0.5)) : 250;
    }
    starts = choose_starts(plan.frame_pts, plan.keyframe_pts, segment_frames);
  }
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t end = i + 1 < starts.size() ? starts[i + 1] : plan.total_frames();
    plan.segments.push_back(Segment{int(i), starts[i], end - starts[i]});
  }
  return plan;
}

nlohmann::json to_json(const SegmentPlan& plan) {
  nlohmann::json segments = nlohmann::json::array();
  for (const Segment& s : plan.segments) segments.push_back({s.first_frame, s.frames});
  nlohmann::json j{{"time_base", {plan.time_base.num, plan.time_base.den}},
                   {"frame_pts", plan.frame_pts},
                   {"keyframe_pts", plan.keyframe_pts},
                   {"segments", segments},
                   {"other_stream_bytes", plan.other_stream_bytes}};
  if (plan.other_packets) {
    nlohmann::json counts = nlohmann::json::object();
    for (const auto& [index, n] : *plan.other_packets) counts[std::to_string(index)] = n;
    j["other_packets"] = counts;
  }
  seal_json(j);
  return j;
}

namespace {

// What the runner and assembly rely on: a usable time base, timestamps in order, and segments
// that cover every frame once, in order.
std::string plan_problem(const SegmentPlan& plan) {
  if (plan.time_base.num <= 0 || plan.time_base.den <= 0)
    return str("time base ", plan.time_base.num, "/", plan.time_base.den);
  if (plan.frame_pts.empty()) return "no frames";
  if (!std::is_sorted(plan.frame_pts.begin(), plan.frame_pts.end())) return "frame timestamps out of order";
  if (!std::is_sorted(plan.keyframe_pts.begin(), plan.keyframe_pts.end())) return "keyframe timestamps out of order";
  if (plan.segments.empty()) return "no segments";
  int64_t next = 0;
  for (const Segment& s : plan.segments) {
    if (s.first_frame != next || s.frames <= 0 || s.frames > plan.total_frames() - next)
      return str("segment ", s.index, " does not follow the one before");
    next += s.frames;
  }
  if (next != plan.total_frames()) return str("the segments cover ", next, " of ", plan.total_frames(), " frames");
  return "";
}

}  // namespace

SegmentPlan plan_from_json(const nlohmann::json& j, const std::string& source) {
  auto damaged = [&](const std::string& why) {
    return Error(ErrorKind::Input, str(source, ": damaged (", why, "); rerun with --restart to plan the job again"));
  };
  if (check_json_seal(j) == SealState::Broken) throw damaged("its content does not match its seal");
  SegmentPlan plan;
  try {
    plan.time_base = {j.at("time_base").at(0).get<int>(), j.at("time_base").at(1).get<int>()};
    plan.frame_pts = j.at("frame_pts").get<std::vector<int64_t>>();
    plan.keyframe_pts = j.at("keyframe_pts").get<std::vector<int64_t>>();
    plan.other_stream_bytes = j.value("other_stream_bytes", int64_t{0});
    if (j.contains("other_packets")) {
      plan.other_packets.emplace();
      for (const auto& [index, n] : j.at("other_packets").items()) (*plan.other_packets)[std::stoi(index)] = n.get<int64_t>();
    }
    int index = 0;
    for (const auto& s : j.at("segments"))
      plan.segments.push_back(Segment{index++, s.at(0).get<int64_t>(), s.at(1).get<int64_t>()});
  } catch (const nlohmann::json::exception& e) {
    throw damaged(str("unreadable: ", first_line_of(e.what())));
  } catch (const std::logic_error&) {  // a stream number that is not one (std::stoi)
    throw damaged("unreadable: other_packets");
  }
  if (const std::string problem = plan_problem(plan); !problem.empty()) throw damaged(problem);
  return plan;
}

}  // namespace framelift::jobs
