#include "media/timeline_mender.h"

#include <algorithm>
#include <cstdio>

#include "util/log.h"

namespace framelift::media {

namespace {

int64_t reset_ticks(const AVFormatContext* format, AVStream* st) {
  int64_t ticks = av_rescale_q(int64_t(TimelineMender::kResetSeconds * 1000), AVRational{1, 1000}, st->time_base);
  if (st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) {
    const AVRational rate = av_guess_frame_rate(const_cast<AVFormatContext*>(format), st, nullptr);
    if (rate.num > 0 && rate.den > 0)
      ticks = std::max(ticks, av_rescale_q(TimelineMender::kReorderFrames, av_inv_q(rate), st->time_base));
  }
  return std::max<int64_t>(1, ticks);
}

}  // namespace

TimelineMender::TimelineMender(const AVFormatContext* format, std::string url)
    : format_(format), url_(std::move(url)), tracks_(format->nb_streams) {
  for (unsigned i = 0; i < format->nb_streams; ++i) {
    Track& t = tracks_[i];
    t.time_base = format->streams[i]->time_base;
    t.reset_ticks = reset_ticks(format, format->streams[i]);
  }
}

void TimelineMender::mend(AVPacket* pkt) {
  if (pkt->stream_index < 0) return;
  // Streams a demuxer adds while reading (MPEG-TS finds them late).
  if (size_t(pkt->stream_index) >= tracks_.size()) {
    const size_t old = tracks_.size();
    tracks_.resize(format_->nb_streams);
    for (size_t i = old; i < tracks_.size(); ++i) {
      tracks_[i].time_base = format_->streams[i]->time_base;
      tracks_[i].reset_ticks = reset_ticks(format_, format_->streams[i]);
    }
    if (size_t(pkt->stream_index) >= tracks_.size()) return;
  }
  Track& t = tracks_[size_t(pkt->stream_index)];
  const int64_t raw = pkt->dts != AV_NOPTS_VALUE ? pkt->dts : pkt->pts;
  if (raw != AV_NOPTS_VALUE && t.latest != AV_NOPTS_VALUE && raw + t.offset < t.latest - t.reset_ticks)
    on_reset(pkt->stream_index, t, raw);
  if (pkt->pts != AV_NOPTS_VALUE) pkt->pts += t.offset;
  if (pkt->dts != AV_NOPTS_VALUE) pkt->dts += t.offset;
  if (raw != AV_NOPTS_VALUE) {
    const int64_t now = raw + t.offset;
    t.latest = t.latest == AV_NOPTS_VALUE ? now : std::max(t.latest, now);
    t.last_end = std::max(t.last_end == AV_NOPTS_VALUE ? now : t.last_end, now + std::max<int64_t>(pkt->duration, 1));
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
    t.latest = t.last_end = AV_NOPTS_VALUE;
  }
}

}  // namespace framelift::media
