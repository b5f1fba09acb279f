#include "media/demuxer.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "media/av_error.h"
#include "util/log.h"
#include "util/stop.h"
#include "util/str.h"

namespace framelift::media {
namespace {

// libavformat polls this while it waits (network opens and reads): a stop ends the wait.
int stop_wanted(void*) { return stop_requested() ? 1 : 0; }

// A FIFO or a character device blocks in open() until a writer comes and in read() while the
// writer is silent, where neither a signal (the handler restarts the call) nor libavformat's
// interrupt callback reaches. Such an input is opened without blocking and read through poll()
// with a short timeout, so that a stop (SIGTERM on a spot reclaim) is seen within 100 ms.
struct StreamIo {
  int fd = -1;
  bool interruptible = true;
  AVIOContext* io = nullptr;
  ~StreamIo() {
    if (io) {
      av_freep(&io->buffer);
      avio_context_free(&io);
    }
    if (fd >= 0) ::close(fd);
  }
};

int read_stream(void* opaque, uint8_t* buf, int size) {
  const StreamIo& s = *static_cast<StreamIo*>(opaque);
  const int fd = s.fd;
  for (;;) {
    if (s.interruptible && stop_requested()) return AVERROR_EXIT;
    pollfd ready{fd, POLLIN, 0};
    const int n_ready = ::poll(&ready, 1, 100);
    if (n_ready < 0 && errno != EINTR) return AVERROR(errno);
    if (n_ready <= 0) continue;
    const ssize_t n = ::read(fd, buf, size_t(size));
    if (n > 0) return int(n);
    if (n == 0) return AVERROR_EOF;  // the writer closed (Linux reports no hangup before one came)
    if (errno != EAGAIN && errno != EINTR) return AVERROR(errno);
  }
}

std::shared_ptr<StreamIo> open_stream_file(const std::string& path, bool interruptible) {
  auto s = std::make_shared<StreamIo>();
  s->interruptible = interruptible;
  s->fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (s->fd < 0) throw Error(ErrorKind::Input, str(path, ": cannot open (", std::strerror(errno), ")"));
  constexpr int kBuffer = 1 << 16;
  auto* buffer = static_cast<unsigned char*>(av_malloc(kBuffer));
  if (buffer) s->io = avio_alloc_context(buffer, kBuffer, 0, s.get(), read_stream, nullptr, nullptr);
  if (!s->io) {
    av_free(buffer);
    throw Error(ErrorKind::Resource, str(path, ": out of memory opening it"));
  }
  return s;
}

}  // namespace

bool is_stream_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
}

Demuxer::Demuxer(const std::string& url, OnStop on_stop) : url_(url) {
  const bool interruptible = on_stop == OnStop::Interrupt;
  const bool is_url = url.find("://") != std::string::npos;
  // "frames/%04d.png": an image sequence, opened by libavformat's image2 demuxer.
  const bool is_sequence = av_filename_number_test(url.c_str()) != 0 && !std::filesystem::exists(url);
  if (!is_url && !is_sequence) {
    std::error_code ec;
    if (!std::filesystem::exists(url, ec)) throw Error(ErrorKind::Input, str(url, ": no such file"));
    if (std::filesystem::is_directory(url, ec))
      throw Error(ErrorKind::Input, str(url, ": is a directory, not a media file"));
  }
  AVFormatContext* raw = avformat_alloc_context();
  if (!raw) throw Error(ErrorKind::Resource, str(url, ": out of memory opening it"));
  if (interruptible) raw->interrupt_callback = AVIOInterruptCB{stop_wanted, nullptr};
  if (!is_url && !is_sequence && is_stream_file(url)) {
    std::shared_ptr<StreamIo> s;
    try {
      s = open_stream_file(url, interruptible);
    } catch (...) {
      avformat_free_context(raw);
      throw;
    }
    raw->pb = s->io;
    raw->flags |= AVFMT_FLAG_CUSTOM_IO;
    stream_io_ = std::move(s);
  }
  int ret = avformat_open_input(&raw, url.c_str(), nullptr, nullptr);  // frees raw on failure
  if (ret < 0 && interruptible) throw_if_stop_requested();
  if (ret == AVERROR_INVALIDDATA)
    throw Error(ErrorKind::Input, str(url, ": not a media file that framelift can read"));
  check(ret, ErrorKind::Input, url);
  format_.reset(raw);
  ret = avformat_find_stream_info(raw, nullptr);
  if (interruptible) throw_if_stop_requested();
  check(ret, ErrorKind::Input, str(url, ": cannot read stream info"));
  mender_ = std::make_unique<TimelineMender>(raw, url);
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
    // A stop is not the end of the input: the frames so far must not pass for all of them.
    if (ret == AVERROR_EXIT) throw_if_stop_requested();
    ended_early_ = true;
    log::warn(url_, ": input ends early (", av_error_text(ret), "); keeping what was read");
    return false;
  }
  mender_->mend(pkt);
  return true;
}

bool Demuxer::seek_video(int64_t pts) {
  mender_->forget_positions();
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
