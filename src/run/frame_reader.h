#pragma once
// Demux and decode for one run, driven by its InputWindow (input_window.h): a whole run, a job's
// segment and a profile sample are read by this one class.
//
// Life cycle: construction opens the input and its decoder (so a bad input is reported before the
// stages load their models); start() seeks to the window's first stretch and decodes up to the
// first frame (the frame, not the container's header, says what the video is: pixel format,
// colour, HDR side data), so format() and first_frame() are known before the encoder is set up.
// Then run() once, on the decode thread. Not thread-safe otherwise: the counters are read
// after run() has returned (the thread joined).
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "media/av_ptr.h"
#include "media/decoder.h"
#include "media/demuxer.h"
#include "media/size_keeper.h"
#include "media/video_format.h"
#include "run/bounded_queue.h"
#include "run/input_window.h"
#include "run/progress.h"

namespace framelift::pipeline {

class FrameReader {
 public:
  // Throws Error(Input) for an input that cannot be opened or has no video stream.
  FrameReader(const std::string& input, const media::DecoderOptions& decoder);
  // Throws Error(Input) for a video without a frame, or (an exact window) a seek that lands
  // after the first stretch's start.
  void start(InputWindow window);

  const InputWindow& window() const { return window_; }
  media::Demuxer& demuxer() { return demux_; }
  AVStream* video_stream() const { return demux_.video_stream(); }
  AVRational frame_rate() const { return rate_; }
  // The first decoded frame (for its HDR side data); valid until run() starts.
  const AVFrame* first_frame() const { return primed_.front().get(); }
  // What the stages get: size, pixel format, colour, field order, time base, rate, origin.
  media::VideoFormat format() const;
  // Packets of other streams read before the first frame, for the writer once its header is out.
  // Empty for a video-only window.
  std::vector<media::PacketPtr> take_early_packets() { return std::move(early_packets_); }

  // The decode thread's body: every frame of the window, in order with strictly increasing
  // timestamps (joined across stretches) and the first frame's size and pixel format (a frame of
  // another size is fitted into it, media/size_keeper.h), into `out` (closed at the end); each other stream's
  // packet, as read, to `other_packet` (not called for a video-only window). Counts the frames
  // the window keeps in `counters.frames_in`. Returns when the window is read, `out` is aborted
  // or a stop is requested (throws Error(Interrupted) then).
  using PacketSink = std::function<void(AVPacket*, AVRational time_base)>;
  void run(BoundedQueue<media::FramePtr>& out, const PacketSink& other_packet, ProgressCounters& counters);

  int64_t frames_in() const { return frames_in_; }
  // Stopped at the window's end or max_frames, rather than at the end of the input.
  bool limited() const { return limited_; }
  int64_t last_pts() const { return last_pts_; }
  int64_t decode_errors() const { return decoder_.error_count(); }

 private:
  // Whether a decoded frame is inside the current stretch (and then joined to the one before);
  // one past its end closes the stretch, and the run when it was the last.
  bool accept(media::FramePtr& f);
  void prime();
  void read_stretches(BoundedQueue<media::FramePtr>& out, const PacketSink& other_packet, ProgressCounters& counters);
  // One decoded frame into `out`, if the window takes it; sets stopped_ when the window or the
  // queue is done.
  void deliver(media::FramePtr f, BoundedQueue<media::FramePtr>& out, ProgressCounters& counters);
  int64_t fix_timestamp(int64_t pts);
  void stamp_aspect(AVFrame* f) const;

  std::string input_;
  InputWindow window_;
  media::Demuxer demux_;
  media::Decoder decoder_;
  AVRational rate_{0, 1};
  int64_t frame_step_ = 1;  // one frame's duration in the video's time base, at least 1

  std::optional<media::SizeKeeper> size_keeper_;  // from the first frame on
  std::deque<media::FramePtr> primed_;
  std::vector<media::PacketPtr> early_packets_;
  bool input_done_ = false;

  size_t stretch_ = 0;    // the stretch being read
  int64_t shift_ = 0;     // added to its timestamps, joining it to the one before
  bool stopped_ = false;  // this stretch is done (or the run: limited_, or the queue aborted)
  bool reseek_ = false;   // the stretch is done; seek to the next one
  bool limited_ = false;
  int64_t frames_in_ = 0;
  int64_t last_pts_ = AV_NOPTS_VALUE;
};

}  // namespace framelift::pipeline
