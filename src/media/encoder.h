#pragma once
// Encodes frames of one VideoFormat with any libavcodec video encoder (libx264, libx265,
// libsvtav1, ffv1, prores_ks, h264_nvenc/hevc_nvenc, ...), with user options passed through.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "media/av_ptr.h"
#include "media/video_format.h"

namespace framelift::media {

class HdrBitstreamInserter;

struct EncoderSettings {
  std::string codec;               // encoder name; "" picks libx264 (or the container's default)
  std::optional<double> crf;       // constant quality, for encoders that have it
  std::string preset;
  std::string pix_fmt;             // "" keeps the input's format (and bit depth) where possible
  std::map<std::string, std::string> options;  // -e key=value, passed to the encoder as is
  int threads = 0;
  // Written into every packet (media/hdr_bitstream_insert.h); set by with_hdr_bitstream_params
  // for encoders that carry HDR10 no other way. Null: nothing inserted.
  std::shared_ptr<const HdrBitstreamInserter> hdr_insert;

  bool operator==(const EncoderSettings&) const = default;
};

class Encoder {
 public:
  using PacketSink = std::function<void(AVPacket*)>;

  // format: what frames will look like; global_header: the container wants extradata (mp4/mkv).
  // Throws Error(Usage) for an unknown encoder, pixel format or option.
  Encoder(const EncoderSettings& settings, const VideoFormat& format, bool global_header);

  // Sends a frame (nullptr drains at the end); every packet that is ready goes to sink with
  // timestamps in context()->time_base.
  void encode(const AVFrame* frame, const PacketSink& sink);

  const AVCodecContext* context() const { return ctx_.get(); }
  AVPixelFormat pix_fmt() const { return ctx_->pix_fmt; }

 private:
  CodecContextPtr ctx_;
  std::shared_ptr<const HdrBitstreamInserter> hdr_insert_;
};

// The video encoder a name means: an encoder ("libx265") or a codec ("hevc", its default encoder);
// "" is libx264. Throws Error(Usage) for anything else.
const AVCodec* find_video_encoder(const std::string& name);

// Chooses the pixel format the encoder will get: the user's, else the input's if the encoder
// takes it, else the closest one the encoder supports (same bit depth and chroma if it can).
AVPixelFormat choose_pix_fmt(const AVCodec* codec, const std::string& requested, AVPixelFormat input);

}  // namespace framelift::media
