#include "run/frame_reader.h"

#include <algorithm>

#include "util/crash_point.h"
#include "util/error.h"
#include "util/profiler.h"
#include "util/stop.h"
#include "util/str.h"

namespace framelift::pipeline {

FrameReader::FrameReader(const std::string& input, const media::DecoderOptions& decoder)
    : input_(input), demux_(input), decoder_(demux_.video_stream(), decoder, input) {
  AVStream* vst = demux_.video_stream();
  rate_ = av_guess_frame_rate(demux_.format(), vst, nullptr);
  frame_step_ = std::max<int64_t>(1, rate_.num > 0 ? av_rescale_q(1, av_inv_q(rate_), vst->time_base) : 1);
}

void FrameReader::start(InputWindow window) {
  window_ = std::move(window);
  if (window_.stretches.empty()) throw Error(ErrorKind::Usage, str(input_, ": nothing of the video to read (an empty window)"));
  if (window_.stretches.front().seek != AV_NOPTS_VALUE) demux_.seek_video(window_.stretches.front().seek);
  prime();
}

void FrameReader::prime() {
  media::PacketPtr pkt = media::make_packet();
  auto to_primed = [&](media::FramePtr f) {
    stamp_aspect(f.get());
    primed_.push_back(std::move(f));
  };
  while (primed_.empty()) {
    if (!demux_.read(pkt.get())) {
      decoder_.decode(nullptr, to_primed);
      input_done_ = true;
      break;
    }
    if (pkt->stream_index == demux_.video_index()) {
      decoder_.decode(pkt.get(), to_primed);
    } else if (!window_.video_only) {
      media::PacketPtr copy(av_packet_clone(pkt.get()));
      if (!copy) throw Error(ErrorKind::Resource, "out of memory buffering a packet");
      early_packets_.push_back(std::move(copy));
    }
  }
  if (primed_.empty())
    throw Error(ErrorKind::Input, str(input_, demux_.ended_early() ? ": truncated or unreadable before the first frame"
                                                                     : ": the video stream has no frames"));
  const Stretch& first = window_.stretches.front();
  const int64_t pts = primed_.front()->pts;
  if (window_.exact && first.seek != AV_NOPTS_VALUE && pts != AV_NOPTS_VALUE && pts > first.from)
    throw Error(ErrorKind::Input, str(input_, ": seeking to segment ", window_.segment_index, " landed after its start"));
  size_keeper_.emplace(format(), input_);
}

media::VideoFormat FrameReader::format() const {
  AVStream* vst = demux_.video_stream();
  const AVFrame* first = primed_.front().get();
  media::VideoFormat f = media::VideoFormat::of_frame(first, vst->time_base, rate_);
  // Decoders that do not flag interlaced frames (FFV1, raw, MPEG-4): the container's field order.
  if (f.field_order == AV_FIELD_UNKNOWN) f.field_order = vst->codecpar->field_order;
  f.start_pts = window_.origin_pts != AV_NOPTS_VALUE ? window_.origin_pts : first->pts == AV_NOPTS_VALUE ? 0 : first->pts;
  return f;
}

// Matroska and MP4 often carry the pixel aspect in the container only (FFV1, raw, a bitstream
// without VUI); frames left without it would come out square. Encoders (FFV1) and filters
// (scale keeps the display aspect) read it from each frame.
void FrameReader::stamp_aspect(AVFrame* f) const {
  const AVRational sar = av_guess_sample_aspect_ratio(demux_.format(), demux_.video_stream(), f);
  if (sar.num > 0 && sar.den > 0) f->sample_aspect_ratio = sar;
}

// Keeps timestamps strictly increasing: encoders and muxers refuse anything else, and broken
// inputs do repeat or omit timestamps.
int64_t FrameReader::fix_timestamp(int64_t pts) {
  if (pts == AV_NOPTS_VALUE) pts = last_pts_ == AV_NOPTS_VALUE ? 0 : last_pts_ + frame_step_;
  if (last_pts_ != AV_NOPTS_VALUE && pts <= last_pts_) pts = last_pts_ + 1;
  return last_pts_ = pts;
}

// Whether the frame is inside the stretch (frames decoded from the keyframe before it are not);
// one past its end closes the stretch.
bool FrameReader::accept(media::FramePtr& f) {
  if (f->pts == AV_NOPTS_VALUE) return true;
  const Stretch& s = window_.stretches[stretch_];
  if (f->pts < s.from) return false;
  if (f->pts > s.to) {
    stopped_ = true;
    if (++stretch_ == window_.stretches.size()) limited_ = true;
    else reseek_ = true;
    return false;
  }
  if (stretch_ > 0 && shift_ == 0) shift_ = last_pts_ + frame_step_ - f->pts;
  f->pts += shift_;
  return true;
}

void FrameReader::deliver(media::FramePtr f, BoundedQueue<media::FramePtr>& out, ProgressCounters& counters) {
  if (stopped_) return;
  count_work("decode.frames", 1);
  crash_point("decode");
  if (!accept(f)) return;
  if (window_.max_frames > 0 && frames_in_ >= window_.max_frames) {
    stopped_ = limited_ = true;  // stop reading, keep what was decoded
    return;
  }
  f->pts = fix_timestamp(f->pts);
  f = size_keeper_->keep(std::move(f));
  stamp_aspect(f.get());
  if (window_.keeps(f->pts)) {
    ++frames_in_;
    ++counters.frames_in;
  }
  Section blocked("decode.blocked");  // the stages are behind
  stopped_ = !out.push(std::move(f));
}

void FrameReader::read_stretches(BoundedQueue<media::FramePtr>& out, const PacketSink& other_packet,
                                 ProgressCounters& counters) {
  Section decoding("decode");
  media::PacketPtr pkt = media::make_packet();
  auto sink = [&](media::FramePtr f) { deliver(std::move(f), out, counters); };
  for (;;) {
    while (!stopped_ && demux_.read(pkt.get())) {
      throw_if_stop_requested();
      if (pkt->stream_index == demux_.video_index())
        decoder_.decode(pkt.get(), sink);
      else if (!window_.video_only)
        other_packet(pkt.get(), demux_.format()->streams[pkt->stream_index]->time_base);
    }
    if (!reseek_) break;
    reseek_ = stopped_ = false;
    shift_ = 0;
    demux_.seek_video(window_.stretches[stretch_].seek);
    decoder_.reset();
  }
  if (!stopped_ || limited_) decoder_.decode(nullptr, sink);
}

void FrameReader::run(BoundedQueue<media::FramePtr>& out, const PacketSink& other_packet, ProgressCounters& counters) {
  while (!primed_.empty() && !stopped_) {
    media::FramePtr f = std::move(primed_.front());
    primed_.pop_front();
    deliver(std::move(f), out, counters);
  }
  primed_.clear();
  if (!input_done_) read_stretches(out, other_packet, counters);
  out.close();
}

}  // namespace framelift::pipeline
