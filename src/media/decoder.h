#pragma once
// Decodes one video stream. Frames come out in presentation order in system memory, with
// frame->pts set to the best-effort timestamp in the stream's time base.
#include <cstdint>
#include <functional>
#include <string>

#include "media/av_ptr.h"

namespace framelift::media {

enum class DecodeErrorPolicy { Skip, Fail };

struct DecoderOptions {
  // "" or "none": software; "auto": the first hardware device that opens; "cuda", "vaapi", ...
  std::string hwaccel;
  DecodeErrorPolicy on_error = DecodeErrorPolicy::Skip;
  int threads = 0;  // 0: libavcodec picks

  bool operator==(const DecoderOptions&) const = default;
};

class Decoder {
 public:
  using FrameSink = std::function<void(FramePtr)>;

  // source names the input in error messages.
  Decoder(const AVStream* stream, const DecoderOptions& options, std::string source);

  // Sends one packet (nullptr drains the decoder at the end) and passes every frame that is ready
  // to sink. Corrupt data is counted; with DecodeErrorPolicy::Fail it throws Error(Input).
  void decode(const AVPacket* packet, const FrameSink& sink);

  // Drops the frames buffered inside the decoder: after a seek they belong to the old position.
  void reset();

  int64_t error_count() const { return errors_; }
  const AVCodecContext* context() const { return ctx_.get(); }
  bool hardware() const { return hw_device_ != nullptr; }

 private:
  void on_corrupt(const std::string& what, int64_t pts);
  FramePtr to_system_memory(FramePtr frame);

  std::string source_;
  DecoderOptions options_;
  AVRational time_base_;
  CodecContextPtr ctx_;
  BufferRefPtr hw_device_;
  int64_t errors_ = 0;
};

}  // namespace framelift::media
