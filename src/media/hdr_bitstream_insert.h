#pragma once
// HDR10's static metadata written into an encoder's packets, for encoders that take it neither
// from frames nor from parameters in libavcodec 5.1 (hevc_nvenc, av1_nvenc, libaom-av1, librav1e):
// an HEVC prefix SEI NAL unit (mastering_display_colour_volume, content_light_level_info) before
// the first slice of every access unit, as x265 writes it, and AV1 metadata OBUs (HDR_MDCV,
// HDR_CLL) before the first frame OBU of every key frame's temporal unit, as SVT-AV1 writes them.
// Players and re-muxers read them there; the container's copy alone is lost on the next remux.
//
//   auto insert = HdrBitstreamInserter::make(AV_CODEC_ID_HEVC, display, light);
//   insert->apply(packet);   // each packet the encoder gives, before it is muxed
//
// Packets must be Annex B (HEVC: what NVENC gives) or the low-overhead OBU format with sizes
// (AV1); packets in another shape pass unchanged. Immutable after make(); thread-safe.
#include <cstdint>
#include <memory>
#include <vector>

extern "C" {
#include <libavcodec/codec_id.h>
#include <libavcodec/packet.h>
#include <libavutil/mastering_display_metadata.h>
}

namespace framelift::media {

class HdrBitstreamInserter {
 public:
  // Null when there is nothing to write (neither metadata given, or primaries or luminance
  // missing and no light level) or the codec is neither HEVC nor AV1. Either pointer may be null.
  static std::shared_ptr<const HdrBitstreamInserter> make(AVCodecID codec, const AVMasteringDisplayMetadata* display,
                                                          const AVContentLightMetadata* light);

  // Splices the metadata into `packet` (its data is replaced by a new buffer; timestamps, flags
  // and side data kept). Throws Error(Resource) when out of memory.
  void apply(AVPacket* packet) const;

  // The bytes spliced in: an Annex B SEI NAL unit with its start code, or metadata OBUs.
  const std::vector<uint8_t>& units() const { return units_; }

  HdrBitstreamInserter(AVCodecID codec, std::vector<uint8_t> units) : codec_(codec), units_(std::move(units)) {}

 private:
  AVCodecID codec_;
  std::vector<uint8_t> units_;
};

// Whether `encoder` (a libavcodec encoder name) needs HdrBitstreamInserter for HDR10 to reach its
// bitstream in this libavcodec.
bool encoder_needs_inserted_hdr(const char* encoder);

}  // namespace framelift::media
