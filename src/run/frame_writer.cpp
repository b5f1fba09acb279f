#include "run/frame_writer.h"

#include "media/hdr_encoder_params.h"
#include "util/crash_point.h"
#include "util/log.h"
#include "util/profiler.h"
#include "util/stop.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

// A whole output's extradata goes in its header unless it is MPEG-TS; a segment's is what the
// final container wants (segments are copied into it).
bool wants_global_header(const WriterOptions& o, const media::Muxer& mux) {
  return o.segment ? o.global_header : mux.temp_path().extension() != ".ts";
}

}  // namespace

FrameWriter::FrameWriter(const WriterOptions& options, media::VideoFormat format, FrameReader& reader)
    : options_(options),
      mux_(options.output, options.segment ? std::string() : options.container),
      format_(format),
      // HDR10 metadata into the bitstream too (media/hdr_encoder_params.h), not only the container.
      encoder_(media::with_hdr_bitstream_params(options.encoder, reader.first_frame()), format, wants_global_header(options, mux_)) {
  mux_.keep_result_if_commit_fails(!options.segment);  // a segment that cannot be committed is redone
  format_.pix_fmt = encoder_.pix_fmt();
  add_streams(reader);
  mux_.write_header();
  for (auto& p : reader.take_early_packets()) copy_packet(p.get(), reader.demuxer().format()->streams[p->stream_index]->time_base);
}

void FrameWriter::add_streams(FrameReader& reader) {
  const AVFormatContext* in = reader.demuxer().format();
  const int vidx = reader.demuxer().video_index();
  for (unsigned i = 0; i < in->nb_streams; ++i) {
    const AVStream* st = in->streams[i];
    if (int(i) == vidx) {
      video_out_ = mux_.add_video(encoder_.context(), st);
    } else if (reader.window().video_only) {
      continue;  // a part of the video; assembling adds the other streams from the source
    } else if (st->codecpar->codec_id == AV_CODEC_ID_NONE) {
      log::warn(reader.demuxer().url(), ": stream #", i, " has an unknown codec and is not copied");
    } else {
      copied_[int(i)] = mux_.add_copy(st);
    }
  }
  mux_.add_hdr_side_data(video_out_, reader.first_frame());
  if (!options_.segment) mux_.warn_if_rotation_dropped(video_out_);
  mux_.copy_global_metadata(in);
}

void FrameWriter::copy_packet(AVPacket* packet, AVRational time_base) {
  if (auto it = copied_.find(packet->stream_index); it != copied_.end()) mux_.write(packet, time_base, it->second);
}

void FrameWriter::write_packet(AVPacket* p) {
  if (options_.segment) packet_times_.push_back({p->pts, p->dts, p->duration});
  mux_.write(p, encoder_.context()->time_base, video_out_);
  crash_point("packet");
}

void FrameWriter::run(BoundedQueue<media::FramePtr>& in, ProgressCounters& counters) {
  auto next = [&] {
    Section idle("encode.idle");  // waiting for processed frames
    return in.pop();
  };
  auto sink = [this](AVPacket* p) { write_packet(p); };
  while (auto f = next()) {
    throw_if_stop_requested();
    Section encoding("encode");
    encoder_.encode(f->get(), sink);
    crash_point("encode");
    ++frames_out_;
    ++counters.frames_out;
  }
}

void FrameWriter::drain() {
  Section encoding("encode");
  encoder_.encode(nullptr, [this](AVPacket* p) { write_packet(p); });
}

}  // namespace framelift::pipeline
