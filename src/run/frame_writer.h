#pragma once
// Encode and mux for one run: the video encoder, the output container (written under a temporary
// name and renamed into place by finish(), media/muxer.h), the other streams copied bit-exact with
// the chapters, metadata and HDR side data, and each video packet's times for a job's segment.
//
// Life cycle: construction sets up the encoder and every output stream and writes the header
// (after it the early packets the reader kept); then copy_packet() from the decode thread and
// run() on the encode thread, at once; then drain() and finish() once everything else succeeded. Destroyed
// without finish(), it leaves no file under the final name.
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "jobs/output_check.h"
#include "media/encoder.h"
#include "media/muxer.h"
#include "media/video_format.h"
#include "run/bounded_queue.h"
#include "run/frame_reader.h"
#include "run/progress.h"

namespace framelift::pipeline {

struct WriterOptions {
  std::filesystem::path output;
  std::string container;        // "" or a format name (-f); a segment's container comes from its name
  media::EncoderSettings encoder;
  // A job's segment: kept as a part (its own container, not kept when the commit fails), with
  // the extradata the final container wants (`global_header`) and each packet's times recorded.
  bool segment = false;
  bool global_header = true;
};

class FrameWriter {
 public:
  // `format`: what the stages produce (its pixel format becomes the encoder's: format()).
  // `reader`: the input whose other streams are copied (unless its window is video-only) and
  // whose first frame carries the HDR side data. Throws Error(Output) or Error(Usage).
  FrameWriter(const WriterOptions& options, media::VideoFormat format, FrameReader& reader);

  // The frames the encoder takes (the stages' format with the encoder's pixel format).
  const media::VideoFormat& format() const { return format_; }

  // A packet of another input stream (the decode thread): copied when that stream is.
  void copy_packet(AVPacket* packet, AVRational time_base);
  // The encode thread's body: every frame of `in` encoded and written, until `in` is closed and
  // empty or aborted.
  void run(BoundedQueue<media::FramePtr>& in, ProgressCounters& counters);
  // The encoder's last packets, written; once, after run(), when the run has not failed.
  void drain();
  // Closes the output, reads it back (jobs/output_check.h: every stream with the packets written
  // to it, else Error(Output) and no file under the final name) and renames it into place. A
  // segment is not read back here: the journal checks it.
  void finish();

  int64_t frames_out() const { return frames_out_; }
  AVRational encoder_time_base() const { return encoder_.context()->time_base; }
  // {pts, dts, duration} of each video packet, in order (segments only).
  std::vector<std::array<int64_t, 3>> take_packet_times() { return std::move(packet_times_); }

 private:
  void add_streams(FrameReader& reader);
  void write_packet(AVPacket* p);

  WriterOptions options_;
  media::Muxer mux_;
  media::VideoFormat format_;
  media::Encoder encoder_;
  std::map<int, int> copied_;  // input stream index -> output stream index
  std::vector<jobs::PromisedStream> promised_;  // in output stream order, packets from the muxer
  unsigned declared_streams_ = 0;  // the input's streams when the output was set up
  const AVFormatContext* input_ = nullptr;  // the reader's, which outlives the writer's copying
  std::string input_name_;
  int video_out_ = -1;
  int64_t frames_out_ = 0;
  std::vector<std::array<int64_t, 3>> packet_times_;
};

}  // namespace framelift::pipeline
