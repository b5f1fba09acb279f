#pragma once
// Text subtitles into the text format an output container holds, where it cannot hold the
// source's: MP4's mov_text into Matroska (as ASS, which keeps its styling), SubRip, ASS or WebVTT
// into MP4 and MOV (as mov_text). The text and its timing are kept; what the target format has no
// words for (ASS positioning in mov_text) is lost, as in ffmpeg's own conversion. Bitmap
// subtitles (PGS, DVD) are pictures, not text, and are never converted.
//
// Owned by the Muxer (media/muxer.h) and called under its lock; not thread-safe on its own.
#include <cstdint>
#include <string>
#include <vector>

#include "media/av_ptr.h"

namespace framelift::media {

// The text subtitle codec `container` holds that `source`'s text converts to, or
// AV_CODEC_ID_NONE when `source` is not a text subtitle or none fits.
AVCodecID text_subtitle_target(const AVOutputFormat* container, AVCodecID source);

// Whether `packet` of a `codec` stream is one that shows nothing: the empty samples the MOV family
// keeps between mov_text subtitles (its sample table has no gaps), which its muxer adds and
// drops as it sees fit. Counts of a stream's packets leave them out.
bool is_empty_subtitle_sample(AVCodecID codec, const AVPacket& packet);

class SubtitleConverter {
 public:
  // Opens the decoder of `source`'s codec and the encoder of `target`. `what` names the stream
  // in error messages. Throws Error(Output) when either does not open.
  SubtitleConverter(const AVStream* source, AVCodecID target, std::string what);

  // The output stream's parameters: the target codec and its header (ASS styles, the mov_text
  // sample description).
  void fill_parameters(AVCodecParameters* par) const;

  // One input packet (timestamps in `time_base`) as a packet of the target format with the same
  // timestamps and duration; nullptr for a packet that shows nothing (MP4's empty gap samples)
  // or that does not decode (a warning, counted in skipped()).
  PacketPtr convert(const AVPacket* packet, AVRational time_base);

  int64_t skipped() const { return skipped_; }

 private:
  std::string what_;
  CodecContextPtr decoder_;
  CodecContextPtr encoder_;
  std::vector<uint8_t> buffer_;  // what the encoder writes a subtitle into, made on first use
  int64_t skipped_ = 0;
};

}  // namespace framelift::media
