#include "media/demuxer.h"

#include <cstdio>
#include <filesystem>

#include "media/av_error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::media {

Demuxer::Demuxer(const std::string& url) : url_(url) {
  const bool is_url = url.find("://") != std::string::npos;
  // "frames/%04d.png": an image sequence, opened by libavformat's image2 demuxer.
  const bool is_sequence = av_filename_number_test(url.c_str()) != 0 && !std::filesystem::exists(url);
  if (!is_url && !is_sequence) {
    std::error_code ec;
    if (!std::filesystem::exists(url, ec)) throw Error(ErrorKind::Input, str(url, ": no such file"));
    if (std::filesystem::is_directory(url, ec))
      throw Error(ErrorKind::Input, str(url, ": is a directory, not a media file"));
  }
  AVFormatContext* raw = nullptr;
  int ret = avformat_open_input(&raw, url.c_str(), nullptr, nullptr);
  if (ret == AVERROR_INVALIDDATA)
    throw Error(ErrorKind::Input, str(url, ": not a media file that framelift can read"));
  check(ret, ErrorKind::Input, url);
  format_.reset(raw);
  check(avformat_find_stream_info(raw, nullptr), ErrorKind::Input, str(url, ": cannot read stream info"));
  video_index_ = av_find_best_stream(raw, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (video_index_ < 0) throw Error(ErrorKind::Input, str(url, ": no video stream"));
  if (!avcodec_find_decoder(video_stream()->codecpar->codec_id))
    throw Error(ErrorKind::Input, str(url, ": no decoder for video codec '",
                                      avcodec_get_name(video_stream()->codecpar->codec_id), "'"));
}

bool Demuxer::read(AVPacket* pkt) {
  av_packet_unref(pkt);
  int ret = av_read_frame(format_.get(), pkt);
  if (ret == AVERROR_EOF) return false;
  if (ret < 0) {
    ended_early_ = true;
    log::warn(url_, ": input ends early (", av_error_text(ret), "); keeping what was read");
    return false;
  }
  return true;
}

bool Demuxer::seek_video(int64_t pts) {
  if (av_seek_frame(format_.get(), video_index_, pts, AVSEEK_FLAG_BACKWARD) >= 0) return true;
  log::debug(url_, ": cannot seek to ", pts, "; reading from the start");
  return avformat_seek_file(format_.get(), -1, INT64_MIN, 0, 0, AVSEEK_FLAG_BYTE) >= 0 ||
         av_seek_frame(format_.get(), video_index_, INT64_MIN, AVSEEK_FLAG_BACKWARD) >= 0;
}

}  // namespace framelift::media

namespace framelift::media {

double declared_video_end_s(const AVFormatContext* format, const AVStream* video) {
  if (video->duration > 0 && video->duration != AV_NOPTS_VALUE) {
    int64_t start = video->start_time == AV_NOPTS_VALUE ? 0 : video->start_time;
    return double(start + video->duration) * av_q2d(video->time_base);
  }
  if (const AVDictionaryEntry* tag = av_dict_get(video->metadata, "DURATION", nullptr, 0)) {
    int h = 0, m = 0;
    double s = 0;
    if (std::sscanf(tag->value, "%d:%d:%lf", &h, &m, &s) == 3) return h * 3600.0 + m * 60.0 + s;
  }
  if (format->duration > 0) return double(format->duration) / AV_TIME_BASE;
  return -1;
}

void check_video_complete(const Demuxer& demux, int64_t last_pts) {
  AVStream* vst = demux.video_stream();
  const AVRational rate = av_guess_frame_rate(demux.format(), vst, nullptr);
  const double last_s = double(last_pts) * av_q2d(vst->time_base);
  const double frame_s = rate.num > 0 ? av_q2d(av_inv_q(rate)) : 0.04;
  const double end_s = declared_video_end_s(demux.format(), vst);
  if (demux.ended_early() || (end_s > 0 && last_s + 2 * frame_s < end_s - 0.5)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.2f s of %.2f s", last_s, end_s);
    throw Error(ErrorKind::Input, str(demux.url(), ": truncated: the video ends at ", buf, " declared"));
  }
}

}  // namespace framelift::media
