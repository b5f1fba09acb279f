#include "media/decoder.h"

extern "C" {
#include <libavutil/hwcontext.h>
}

#include "media/av_error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::media {
namespace {

AVBufferRef* open_hw_device(const AVCodec* codec, const std::string& name) {
  for (int i = 0;; ++i) {
    const AVCodecHWConfig* cfg = avcodec_get_hw_config(codec, i);
    if (!cfg) return nullptr;
    if (!(cfg->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX)) continue;
    const char* type_name = av_hwdevice_get_type_name(cfg->device_type);
    if (name != "auto" && (!type_name || name != type_name)) continue;
    AVBufferRef* device = nullptr;
    if (av_hwdevice_ctx_create(&device, cfg->device_type, nullptr, nullptr, 0) >= 0) return device;
    if (name != "auto") return nullptr;
  }
}

std::string timestamp_text(int64_t pts, AVRational tb) {
  if (pts == AV_NOPTS_VALUE) return "unknown time";
  return str(pts * av_q2d(tb), " s");
}

}  // namespace

Decoder::Decoder(const AVStream* stream, const DecoderOptions& options, std::string source)
    : source_(std::move(source)), options_(options), time_base_(stream->time_base) {
  const AVCodec* codec = avcodec_find_decoder(stream->codecpar->codec_id);
  if (!codec) throw Error(ErrorKind::Input, str(source_, ": no decoder for the video codec"));
  ctx_.reset(avcodec_alloc_context3(codec));
  if (!ctx_) throw Error(ErrorKind::Resource, "out of memory creating a decoder");
  check(avcodec_parameters_to_context(ctx_.get(), stream->codecpar), ErrorKind::Input, source_);
  ctx_->pkt_timebase = stream->time_base;
  ctx_->thread_count = options.threads;
  if (!options.hwaccel.empty() && options.hwaccel != "none") {
    hw_device_.reset(open_hw_device(codec, options.hwaccel));
    if (hw_device_) {
      ctx_->hw_device_ctx = av_buffer_ref(hw_device_.get());
      log::info("decoding with hardware acceleration (", options.hwaccel, ")");
    } else {
      log::warn("hardware decoding '", options.hwaccel, "' is not available for ", codec->name,
                " on this machine; decoding on the CPU");
    }
  }
  check(avcodec_open2(ctx_.get(), codec, nullptr), ErrorKind::Input,
        str(source_, ": cannot open the ", codec->name, " decoder"));
}

void Decoder::on_corrupt(const std::string& what, int64_t pts) {
  ++errors_;
  if (options_.on_error == DecodeErrorPolicy::Fail)
    throw Error(ErrorKind::Input, str(source_, ": corrupt video data at ", timestamp_text(pts, time_base_),
                                      " (", what, "); use --on-decode-error skip to continue past it"));
  log::debug(source_, ": corrupt video data at ", timestamp_text(pts, time_base_), " (", what, ")");
}

FramePtr Decoder::to_system_memory(FramePtr frame) {
  if (!frame->hw_frames_ctx) return frame;
  FramePtr sw = make_frame();
  check(av_hwframe_transfer_data(sw.get(), frame.get(), 0), ErrorKind::Resource,
        str(source_, ": cannot copy a decoded frame from the hardware decoder"));
  check(av_frame_copy_props(sw.get(), frame.get()), ErrorKind::Resource, "frame properties");
  return sw;
}

void Decoder::reset() { avcodec_flush_buffers(ctx_.get()); }

void Decoder::decode(const AVPacket* packet, const FrameSink& sink) {
  if (packet && (packet->flags & AV_PKT_FLAG_CORRUPT)) on_corrupt("damaged packet", packet->pts);
  int ret = avcodec_send_packet(ctx_.get(), packet);
  if (ret == AVERROR_INVALIDDATA) {
    on_corrupt("undecodable packet", packet ? packet->pts : AV_NOPTS_VALUE);
  } else if (ret < 0 && ret != AVERROR_EOF) {
    check(ret, ErrorKind::Input, str(source_, ": decoding failed"));
  }
  for (;;) {
    FramePtr frame = make_frame();
    ret = avcodec_receive_frame(ctx_.get(), frame.get());
    if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return;
    if (ret == AVERROR_INVALIDDATA) {
      on_corrupt("undecodable frame", AV_NOPTS_VALUE);
      continue;
    }
    check(ret, ErrorKind::Input, str(source_, ": decoding failed"));
    if (frame->decode_error_flags || (frame->flags & AV_FRAME_FLAG_CORRUPT))
      on_corrupt("concealed errors", frame->best_effort_timestamp);
    frame->pts = frame->best_effort_timestamp;
    sink(to_system_memory(std::move(frame)));
  }
}

}  // namespace framelift::media
