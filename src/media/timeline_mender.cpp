#include "media/timeline_mender.h"

#include <algorithm>
#include <cstdio>

#include "util/log.h"

namespace framelift::media {

TimelineMender::TimelineMender(const AVFormatContext* format, std::string url)
    : format_(format), url_(std::move(url)), tracks_(format->nb_streams) {
  for (unsigned i = 0; i < format->nb_streams; ++i) {
    Track& t = tracks_[i];
    t.time_base = format->streams[i]->time_base;
    t.reset_ticks = std::max<int64_t>(1, av_rescale_q(int64_t(kResetSeconds * 1000), AVRational{1, 1000}, t.time_base));
  }
}

void TimelineMender::mend(AVPacket* pkt) {
  if (pkt->stream_index < 0) return;
  // Streams a demuxer adds while reading (MPEG-TS finds them late).
  if (size_t(pkt->stream_index) >= tracks_.size()) {
    const size_t old = tracks_.size();
    tracks_.resize(format_->nb_streams);
    for (size_t i = old; i < tracks_.size(); ++i) tracks_[i].time_base = format_->streams[i]->time_base;
    if (size_t(pkt->stream_index) >= tracks_.size()) return;
  }
  Track& t = tracks_[size_t(pkt->stream_index)];
  const int64_t raw = pkt->dts != AV_NOPTS_VALUE ? pkt->dts : pkt->pts;
  if (raw != AV_NOPTS_VALUE && t.last_dts != AV_NOPTS_VALUE && raw + t.offset < t.last_dts - t.reset_ticks)
    on_reset(pkt->stream_index, t, raw);
  if (pkt->pts != AV_NOPTS_VALUE) pkt->pts += t.offset;
  if (pkt->dts != AV_NOPTS_VALUE) pkt->dts += t.offset;
  if (raw != AV_NOPTS_VALUE) {
    t.last_dts = raw + t.offset;
    t.last_end = std::max(t.last_end == AV_NOPTS_VALUE ? t.last_dts : t.last_end, t.last_dts + std::max<int64_t>(pkt->duration, 1));
  }
}

// The stream continues at the end of its last packet.
void TimelineMender::on_reset(int index, Track& t, int64_t raw_dts) {
  const int64_t before = raw_dts + t.offset;
  t.offset = t.last_end - raw_dts;
  ++resets_;
  const AVStream* st = format_->streams[index];
  char when[64];
  std::snprintf(when, sizeof when, "%.3f s, back %.3f s", double(t.last_end) * av_q2d(t.time_base),
                double(t.last_end - before) * av_q2d(t.time_base));
  const char* type = av_get_media_type_string(st->codecpar->codec_type);
  log::warn(url_, ": the timestamps of stream ", index, " (", type ? type : "data",
            ") go back at ", when, " (a joined or restarted stream); re-timed to continue from there");
}

void TimelineMender::forget_positions() {
  for (Track& t : tracks_) {
    t.offset = 0;
    t.last_dts = t.last_end = AV_NOPTS_VALUE;
  }
}

}  // namespace framelift::media
