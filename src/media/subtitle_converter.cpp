#include "media/subtitle_converter.h"

#include <cstring>

extern "C" {
#include <libavutil/intreadwrite.h>
}

#include "media/av_error.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::media {
namespace {

// Freed with the subtitle it owns, whatever the decoder put in it.
struct DecodedSubtitle {
  AVSubtitle sub{};
  ~DecodedSubtitle() { avsubtitle_free(&sub); }
};

// The largest packet a text encoder writes: ffmpeg's own limit for one subtitle.
constexpr size_t kMaxSubtitleBytes = 1 << 20;

}  // namespace

bool is_empty_subtitle_sample(AVCodecID codec, const AVPacket& packet) {
  // A mov_text sample starts with its text's length in two bytes.
  return codec == AV_CODEC_ID_MOV_TEXT && (packet.size < 2 || (packet.size == 2 && AV_RB16(packet.data) == 0));
}

AVCodecID text_subtitle_target(const AVOutputFormat* container, AVCodecID source) {
  const AVCodecDescriptor* d = avcodec_descriptor_get(source);
  if (!d || d->type != AVMEDIA_TYPE_SUBTITLE || !(d->props & AV_CODEC_PROP_TEXT_SUB)) return AV_CODEC_ID_NONE;
  if (!avcodec_find_decoder(source)) return AV_CODEC_ID_NONE;
  // ASS first: it has words for everything the others style (Matroska's own text format, and
  // ffmpeg's default there); MP4 and MOV hold mov_text only, WebM WebVTT only.
  for (AVCodecID target : {AV_CODEC_ID_ASS, AV_CODEC_ID_SUBRIP, AV_CODEC_ID_MOV_TEXT, AV_CODEC_ID_WEBVTT})
    if (avformat_query_codec(container, target, FF_COMPLIANCE_NORMAL) == 1 && avcodec_find_encoder(target)) return target;
  return AV_CODEC_ID_NONE;
}

SubtitleConverter::SubtitleConverter(const AVStream* source, AVCodecID target, std::string what) : what_(std::move(what)) {
  const AVCodec* dec = avcodec_find_decoder(source->codecpar->codec_id);
  const AVCodec* enc = avcodec_find_encoder(target);
  if (!dec || !enc)
    throw Error(ErrorKind::Output, str(what_, ": no ", dec ? "encoder" : "decoder", " to convert it to ", avcodec_get_name(target)));
  decoder_.reset(avcodec_alloc_context3(dec));
  encoder_.reset(avcodec_alloc_context3(enc));
  if (!decoder_ || !encoder_) throw Error(ErrorKind::Resource, str(what_, ": out of memory converting it"));
  check(avcodec_parameters_to_context(decoder_.get(), source->codecpar), ErrorKind::Output, what_);
  decoder_->pkt_timebase = source->time_base;
  check(avcodec_open2(decoder_.get(), dec, nullptr), ErrorKind::Output, str(what_, ": its decoder does not open"));
  // The encoders take their styles from the ASS header the decoder made of the source's own
  // (mov_text's sample description, an ASS file's [V4+ Styles], or the defaults for SubRip).
  if (decoder_->subtitle_header && decoder_->subtitle_header_size > 0) {
    encoder_->subtitle_header = static_cast<uint8_t*>(av_mallocz(size_t(decoder_->subtitle_header_size) + 1));
    if (!encoder_->subtitle_header) throw Error(ErrorKind::Resource, str(what_, ": out of memory converting it"));
    memcpy(encoder_->subtitle_header, decoder_->subtitle_header, size_t(decoder_->subtitle_header_size));
    encoder_->subtitle_header_size = decoder_->subtitle_header_size;
  }
  encoder_->time_base = source->time_base;
  check(avcodec_open2(encoder_.get(), enc, nullptr), ErrorKind::Output, str(what_, ": the ", enc->name, " encoder does not open"));
}

void SubtitleConverter::fill_parameters(AVCodecParameters* par) const {
  check(avcodec_parameters_from_context(par, encoder_.get()), ErrorKind::Output, what_);
}

PacketPtr SubtitleConverter::convert(const AVPacket* packet, AVRational time_base) {
  decoder_->pkt_timebase = time_base;
  DecodedSubtitle decoded;
  int got = 0;
  // FFmpeg 5.1 takes the packet as non-const, and does not change it.
  const int ret = avcodec_decode_subtitle2(decoder_.get(), &decoded.sub, &got, const_cast<AVPacket*>(packet));
  if (ret < 0) {
    ++skipped_;
    log::warn(what_, ": a subtitle at ", packet->pts == AV_NOPTS_VALUE ? 0.0 : packet->pts * av_q2d(time_base),
              " s does not decode (", av_error_text(ret), ") and is left out");
    return nullptr;
  }
  if (!got || decoded.sub.num_rects == 0) return nullptr;  // an empty sample: nothing is shown

  if (buffer_.empty()) buffer_.resize(kMaxSubtitleBytes);
  const int size = avcodec_encode_subtitle(encoder_.get(), buffer_.data(), int(buffer_.size()), &decoded.sub);
  if (size < 0)
    throw Error(ErrorKind::Output, str(what_, ": the subtitle at ", packet->pts * av_q2d(time_base), " s does not convert to ",
                                       encoder_->codec->name, " (", av_error_text(size), ")"));
  PacketPtr out = make_packet();
  check(av_new_packet(out.get(), size), ErrorKind::Resource, what_);
  memcpy(out->data, buffer_.data(), size_t(size));
  // The text changes form, not time: the source packet's timestamps, as they were.
  out->pts = packet->pts;
  out->dts = packet->dts;
  out->duration = packet->duration;
  out->flags = AV_PKT_FLAG_KEY;
  return out;
}

}  // namespace framelift::media
