#pragma once
// Joins a stream whose timestamps go back (two MPEG-TS files concatenated, a capture that reset
// its clock, an encoder restarted mid-broadcast) into one timeline, as ffmpeg's concat demuxer
// would have: from the reset on, each stream's packets are shifted so that the stream continues
// where it stopped (its last packet's end). Without it, every frame after the reset would be
// pushed one tick past the last one (encoders and muxers refuse timestamps that go back), and the
// second half of the video would play as one still frame.
//
// A reset is a timestamp (the decode one, else the presentation one) more than kResetSeconds
// before the latest one of its stream, or for video more than 16 frames before it, whichever is
// more: presentation times of B-frames (Matroska stores no decode times) go back by the
// reordering depth, which H.264 and HEVC bound at 16 frames. Smaller steps back are left for the
// frame reader's per-frame fix. Each reset
// is reported once per stream, at warn level, naming the input and the time.
//
// Not thread-safe; one per demuxer, fed every packet in read order.
#include <cstdint>
#include <string>
#include <vector>

#include "media/av_ptr.h"

namespace framelift::media {

class TimelineMender {
 public:
  static constexpr double kResetSeconds = 1.0;
  static constexpr int kReorderFrames = 16;

  TimelineMender(const AVFormatContext* format, std::string url);
  // Shifts pkt's pts and dts onto the joined timeline (in place).
  void mend(AVPacket* pkt);
  // After a seek: the next packets are a new start, not a reset. (Seeking an input that was
  // mended lands on raw timestamps; callers do not seek such an input, see mended().)
  void forget_positions();
  // Whether any stream's timestamps went back: the input cannot then be located by timestamp
  // (a seek lands on the raw times, which are ambiguous).
  bool mended() const { return resets_ > 0; }
  int resets() const { return resets_; }

 private:
  struct Track {
    AVRational time_base{1, 1};
    int64_t offset = 0;                   // added to this stream's raw timestamps
    int64_t latest = AV_NOPTS_VALUE;      // the latest mended timestamp
    int64_t last_end = AV_NOPTS_VALUE;    // the latest mended timestamp + its packet's duration
    int64_t reset_ticks = 1;              // how far back is a reset, in this stream's time base
  };

  void on_reset(int index, Track& t, int64_t raw_dts);

  const AVFormatContext* format_;
  std::string url_;
  std::vector<Track> tracks_;
  int resets_ = 0;
};

}  // namespace framelift::media
