#include "media/encoder.h"

extern "C" {
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

#include "media/av_error.h"
#include "media/hdr_bitstream_insert.h"
#include "util/crash_point.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::media {

AVPixelFormat choose_pix_fmt(const AVCodec* codec, const std::string& requested, AVPixelFormat input) {
  if (!requested.empty()) {
    AVPixelFormat f = av_get_pix_fmt(requested.c_str());
    if (f == AV_PIX_FMT_NONE) throw Error(ErrorKind::Usage, str("unknown pixel format '", requested, "'"));
    return f;
  }
  if (!codec->pix_fmts) return input;
  for (const AVPixelFormat* p = codec->pix_fmts; *p != AV_PIX_FMT_NONE; ++p)
    if (*p == input) return input;
  // With has_alpha, losing an alpha plane counts as a loss: an encoder that can keep it does.
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(input);
  const int has_alpha = d && (d->flags & AV_PIX_FMT_FLAG_ALPHA) ? 1 : 0;
  return avcodec_find_best_pix_fmt_of_list(codec->pix_fmts, input, has_alpha, nullptr);
}

const AVCodec* find_video_encoder(const std::string& codec_name) {
  const std::string name = codec_name.empty() ? "libx264" : codec_name;
  const AVCodec* codec = avcodec_find_encoder_by_name(name.c_str());
  if (!codec) {
    // Accept codec names too ("h264", "hevc", "av1").
    const AVCodecDescriptor* desc = avcodec_descriptor_get_by_name(name.c_str());
    if (desc) codec = avcodec_find_encoder(desc->id);
  }
  if (!codec || codec->type != AVMEDIA_TYPE_VIDEO)
    throw Error(ErrorKind::Usage, str("unknown video encoder '", name, "' (see `ffmpeg -encoders`)"));
  return codec;
}

Encoder::Encoder(const EncoderSettings& s, const VideoFormat& format, bool global_header) : hdr_insert_(s.hdr_insert) {
  const AVCodec* codec = find_video_encoder(s.codec);

  ctx_.reset(avcodec_alloc_context3(codec));
  if (!ctx_) throw Error(ErrorKind::Resource, "out of memory creating an encoder");
  ctx_->width = format.width;
  ctx_->height = format.height;
  ctx_->pix_fmt = choose_pix_fmt(codec, s.pix_fmt, format.pix_fmt);
  ctx_->time_base = format.time_base;
  if (format.frame_rate.num > 0) ctx_->framerate = format.frame_rate;
  ctx_->sample_aspect_ratio = format.sample_aspect;
  ctx_->color_primaries = format.primaries;
  ctx_->color_trc = format.transfer;
  ctx_->colorspace = format.matrix;
  ctx_->color_range = format.range;
  ctx_->chroma_sample_location = format.chroma_location;
  // Written to the stream (and the container's field order): progressive after deinterlacing,
  // the source's otherwise, so players and later tools do not treat the result as interlaced again.
  ctx_->field_order = format.field_order;
  ctx_->thread_count = s.threads;
  if (global_header) ctx_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;

  AVDictionary* raw_opts = nullptr;
  for (const auto& [k, v] : s.options) av_dict_set(&raw_opts, k.c_str(), v.c_str(), 0);
  if (s.crf) av_dict_set(&raw_opts, "crf", str(*s.crf).c_str(), 0);
  if (!s.preset.empty()) av_dict_set(&raw_opts, "preset", s.preset.c_str(), 0);
  std::unique_ptr<AVDictionary*, void (*)(AVDictionary**)> opts(&raw_opts, av_dict_free);

  crash_point("encoder-open");
  int ret = avcodec_open2(ctx_.get(), codec, opts.get());
  const AVPixFmtDescriptor* pix = av_pix_fmt_desc_get(ctx_->pix_fmt);
  const int x_step = pix ? 1 << pix->log2_chroma_w : 1, y_step = pix ? 1 << pix->log2_chroma_h : 1;
  if (ret < 0 && (format.width % x_step || format.height % y_step))
    // What libx264 and most others fail on with "Generic error in an external library".
    throw Error(ErrorKind::Usage, str("cannot open encoder ", codec->name, " for ", format.width, "x", format.height, " ",
                                      av_get_pix_fmt_name(ctx_->pix_fmt), ": its chroma needs a width divisible by ",
                                      x_step, " and a height divisible by ", y_step,
                                      "; resize (e.g. resize:w=", format.width - format.width % x_step,
                                      ") or choose --pix-fmt yuv444p"));
  if (ret < 0)
    throw Error(ErrorKind::Usage, str("cannot open encoder ", codec->name, " for ", format.width, "x",
                                      format.height, " ", av_get_pix_fmt_name(ctx_->pix_fmt), ": ",
                                      av_error_text(ret)));
  // Options the encoder did not consume are typos or belong to another encoder: say so.
  if (const AVDictionaryEntry* e = av_dict_get(*opts, "", nullptr, AV_DICT_IGNORE_SUFFIX))
    throw Error(ErrorKind::Usage, str("encoder ", codec->name, " has no option '", e->key, "'"));
}

void Encoder::encode(const AVFrame* frame, const PacketSink& sink) {
  int ret = avcodec_send_frame(ctx_.get(), frame);
  if (ret < 0 && ret != AVERROR_EOF) check(ret, ErrorKind::Output, str("encoding with ", ctx_->codec->name));
  PacketPtr pkt = make_packet();
  for (;;) {
    ret = avcodec_receive_packet(ctx_.get(), pkt.get());
    if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return;
    check(ret, ErrorKind::Output, str("encoding with ", ctx_->codec->name));
    if (hdr_insert_) hdr_insert_->apply(pkt.get());
    sink(pkt.get());
    av_packet_unref(pkt.get());
  }
}

}  // namespace framelift::media
