#pragma once
// Opens any input libavformat reads (files, http(s) and other URLs) and hands out its packets.
#include <memory>
#include <string>

#include "media/av_ptr.h"
#include "media/timeline_mender.h"

namespace framelift::media {

// Whether a stop (util/stop.h) cuts opening and reading short. Interrupt: for work a stop
// abandons. Finish: for a short check that must end once begun, such as counting the frames of
// an output already renamed into place (cut short, the run would report a stop with its result
// complete under the final name, and the rerun would find that name taken).
enum class OnStop { Interrupt, Finish };

class Demuxer {
 public:
  // Throws Error(Input, "<url>: <problem>") for a missing file, a file that is not media, or
  // media without a video stream. With OnStop::Interrupt, opening and reading honour a stop
  // within a fraction of a second, also while waiting on a FIFO or a network peer that sends
  // nothing: Error(Interrupted) then.
  explicit Demuxer(const std::string& url, OnStop on_stop = OnStop::Interrupt);

  AVFormatContext* format() const { return format_.get(); }
  int video_index() const { return video_index_; }
  AVStream* video_stream() const { return format_->streams[video_index_]; }
  const std::string& url() const { return url_; }

  // Reads the next packet into pkt (unreferenced first), its timestamps joined across resets
  // (timeline_mender.h). Returns false at the end of the input.
  // A read error in the middle of a file (truncation) ends the input too, with a warning, so the
  // frames decoded so far are kept; the caller decides whether that is an error.
  bool read(AVPacket* pkt);
  bool ended_early() const { return ended_early_; }
  // Whether the timestamps of some stream went back and were re-timed: such an input cannot be
  // located by timestamp (seek_video lands on raw times).
  bool timeline_mended() const { return mender_ && mender_->mended(); }

  // Moves to the video keyframe at or before `pts` (video time base), for decoding a slice of
  // the input; where the container cannot seek there, back to the start. Returns false only when
  // even that fails. Callers still check the first frame they get: a seek may land early.
  bool seek_video(int64_t pts);

 private:
  std::string url_;
  std::shared_ptr<void> stream_io_;  // a FIFO's or device's own reader; outlives format_
  InputFormatPtr format_;
  std::unique_ptr<TimelineMender> mender_;
  int video_index_ = -1;
  bool ended_early_ = false;
};

}  // namespace framelift::media

namespace framelift::media {

// A local FIFO or character device: read once, as it comes, never seeked.
bool is_stream_file(const std::string& path);

// Where the container says the video stream ends, in seconds; -1 when it does not say.
// (Stream duration, else Matroska's per-stream DURATION tag, else the file's duration.)
double declared_video_end_s(const AVFormatContext* format, const AVStream* video);

// A file cut short (an interrupted download or copy) often reads without an error up to the cut:
// compares the last frame's timestamp (`last_pts`, video time base) with where the container
// says the video ends, so that it is not taken for a complete, shorter video. Throws
// Error(Input, "<url>: truncated: ...") after a read error or when more than half a second is
// missing.
void check_video_complete(const Demuxer& demux, int64_t last_pts);

}  // namespace framelift::media
