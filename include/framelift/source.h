#pragma once
// Decoded frames of a video file, in memory, for programs that drive a Pipeline themselves: the
// first half of what run() does, one frame at a time. A whole file, a window of it (a segment,
// a profile's sample: from a time, so many frames) in presentation order, each converted to the
// Frame layout (planar float RGB, code k at k / (2^bits - 1) exactly; docs/frame-layout.md).
//
// Usage:
//
//   framelift::Source in("clip.mkv", {.start_s = 10, .max_frames = 48});
//   framelift::Pipeline p("upscale:model=realesr-animevideov3-x2");
//   framelift::Sink out("clip_x2.mkv", p.configure(in.shape()), {.codec = "libx264", .crf = 18});
//   while (auto f = in.read()) { p.send(std::move(*f)); while (auto g = p.receive()) out.write(*g); }
//   p.flush();
//   while (auto g = p.receive()) out.write(*g);
//   out.close();
//
// Only the video stream is read; run() is the way to keep audio, subtitles and chapters.
//
// Errors: throw framelift::Error(Input) naming the file: missing, not media, no video stream, no
// frames (after start_s: a start at or past the last frame is this error, not an empty Source),
// corrupt data with fail_on_corrupt_frames. Error(Usage) naming the option, before the file is
// opened: start_s NaN, infinite or negative, max_frames negative; and once it is open, a start_s
// too far out for the stream's timestamps (over 2^62 ticks of its time base) to hold.
// A moved-from Source may be destroyed or assigned a new one; every other function throws
// Error(Usage, "framelift::Source: used after being moved from").
// Thread-safety: one thread at a time per Source; separate Sources are independent.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "framelift/choices.h"
#include "framelift/frame.h"
#include "framelift/pipeline.h"

namespace framelift {

struct SourceOptions {
  double start_s = 0;                   // from the first frame at or after this long after the video's start (seeks)
  int64_t max_frames = 0;               // 0: to the end; >= 0
  HwAccel hwaccel = HwAccel::None;      // hardware decoding
  bool fail_on_corrupt_frames = false;  // false: skip them (counted by decode_errors())
};

class Source {
 public:
  // Opens the input and decodes its first frame (its shape is known from then on).
  explicit Source(const std::string& input, const SourceOptions& options = {});
  ~Source();
  Source(Source&&) noexcept;
  Source& operator=(Source&&) noexcept;

  // Size, frame rate, time base of Frame::pts (the stream's), first timestamp, field order: what
  // Pipeline::configure takes.
  const VideoShape& shape() const;
  // The next frame, or nullopt at the end of the file or after max_frames. Every frame has
  // shape()'s size and its timestamps only go forward, as `run` gives them (docs/jobs.md): a
  // stream that changes size mid-way has the later frames fitted into the first size (black
  // bars), and one whose timestamps go back is re-timed to continue; each is logged as a warning.
  std::optional<Frame> read();
  int64_t decode_errors() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace framelift
