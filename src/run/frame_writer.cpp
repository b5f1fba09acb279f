#include "run/frame_writer.h"

#include "media/hdr_encoder_params.h"
#include "util/crash_point.h"
#include "util/error.h"
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
  declared_streams_ = in->nb_streams;
  input_ = in;
  input_name_ = reader.demuxer().url();
  for (unsigned i = 0; i < in->nb_streams; ++i) {
    const AVStream* st = in->streams[i];
    if (int(i) == vidx) {
      video_out_ = mux_.add_video(encoder_.context(), st);
      promised_.push_back({int(i), AVMEDIA_TYPE_VIDEO, encoder_.context()->codec_id, 0, video_out_});
    } else if (reader.window().video_only) {
      continue;  // a part of the video; assembling adds the other streams from the source
    } else if (st->codecpar->codec_id == AV_CODEC_ID_NONE) {
      log::warn(reader.demuxer().url(), ": stream #", i, " has an unknown codec and is not copied");
    } else {
      const int out = copied_[int(i)] = mux_.add_copy(st);
      const bool cover = !mux_.keeps_packets(out);  // cover art in Matroska: an attachment
      promised_.push_back({int(i), cover ? AVMEDIA_TYPE_ATTACHMENT : st->codecpar->codec_type, mux_.codec(out), 0, out});
    }
  }
  mux_.add_hdr_side_data(video_out_, reader.first_frame());
  if (!options_.segment) mux_.warn_if_rotation_dropped(video_out_);
  mux_.copy_global_metadata(in);
}

void FrameWriter::copy_packet(AVPacket* packet, AVRational time_base) {
  if (auto it = copied_.find(packet->stream_index); it != copied_.end()) {
    mux_.write(packet, time_base, it->second);
    return;
  }
  // A stream that appeared mid-file (an MPEG-TS program that gains one) has no output stream:
  // refused rather than dropped, with the way to a file that lists it from the start.
  if (unsigned(packet->stream_index) >= declared_streams_ && !options_.segment) {
    const char* kind = av_get_media_type_string(input_->streams[packet->stream_index]->codecpar->codec_type);
    throw Error(ErrorKind::Input, str(input_name_, ": ", kind ? kind : "data", " stream #", packet->stream_index,
                                      " starts mid-file (after the streams listed at the start), so its packets cannot be copied; ",
                                      "remux it so every stream is listed first, e.g. ffmpeg -probesize 2G -analyzeduration 2G ",
                                      "-i INPUT -map 0 -c copy fixed.mkv"));
  }
}

void FrameWriter::finish() {
  mux_.close();
  for (jobs::PromisedStream& p : promised_) p.packets = mux_.packets_written(p.output_index);
  if (!options_.segment) {
    // MPEG-TS regroups audio frames into PES packets: there only the streams are compared.
    const std::string ext = options_.output.extension().string();
    jobs::check_output_streams(mux_.temp_path(), options_.output, promised_, ext != ".ts" && ext != ".m2ts" && ext != ".mts");
  }
  mux_.commit();
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
