#include "media/hdr_bitstream_insert.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>

extern "C" {
#include <libavcodec/defs.h>
#include <libavutil/buffer.h>
}

#include "util/error.h"

namespace framelift::media {
namespace {

void put16(std::vector<uint8_t>& b, uint32_t v) {
  b.push_back(uint8_t(v >> 8));
  b.push_back(uint8_t(v));
}

void put32(std::vector<uint8_t>& b, uint32_t v) {
  put16(b, v >> 16);
  put16(b, v & 0xffff);
}

// A rational in `units` per 1, rounded and held inside the field's range.
uint32_t fixed(AVRational q, double units, uint32_t max) {
  const double v = std::round(av_q2d(q) * units);
  return v <= 0 ? 0 : v >= max ? max : uint32_t(v);
}

bool has_display(const AVMasteringDisplayMetadata* d) { return d && d->has_primaries && d->has_luminance; }

// ---- HEVC (ITU-T H.265 D.2.28 and D.2.35) ----

void put_sei_message(std::vector<uint8_t>& rbsp, int type, const std::vector<uint8_t>& payload) {
  rbsp.push_back(uint8_t(type >= 255 ? 255 : type));  // both types used here are < 255
  rbsp.push_back(uint8_t(payload.size()));
  rbsp.insert(rbsp.end(), payload.begin(), payload.end());
}

std::vector<uint8_t> hevc_sei(const AVMasteringDisplayMetadata* d, const AVContentLightMetadata* l) {
  std::vector<uint8_t> rbsp;
  if (has_display(d)) {
    // Green, blue, red in units of 0.00002; luminance in 0.0001 cd/m2 (the order x265 writes).
    std::vector<uint8_t> p;
    for (int c : {1, 2, 0}) {
      put16(p, fixed(d->display_primaries[c][0], 50000, 50000));
      put16(p, fixed(d->display_primaries[c][1], 50000, 50000));
    }
    put16(p, fixed(d->white_point[0], 50000, 50000));
    put16(p, fixed(d->white_point[1], 50000, 50000));
    put32(p, fixed(d->max_luminance, 10000, UINT32_MAX));
    put32(p, fixed(d->min_luminance, 10000, UINT32_MAX));
    put_sei_message(rbsp, 137, p);
  }
  if (l) {
    std::vector<uint8_t> p;
    put16(p, std::min(l->MaxCLL, 65535u));
    put16(p, std::min(l->MaxFALL, 65535u));
    put_sei_message(rbsp, 144, p);
  }
  rbsp.push_back(0x80);  // rbsp_trailing_bits
  // Start code, NAL header (PREFIX_SEI_NUT 39, layer 0, temporal id 1), then the RBSP with
  // emulation prevention: no 00 00 0x (x <= 3) may appear inside a NAL unit.
  std::vector<uint8_t> nal = {0, 0, 0, 1, 39 << 1, 1};
  int zeros = 0;
  for (uint8_t byte : rbsp) {
    if (zeros >= 2 && byte <= 3) {
      nal.push_back(3);
      zeros = 0;
    }
    nal.push_back(byte);
    zeros = byte == 0 ? zeros + 1 : 0;
  }
  return nal;
}

// Offset of the start code of the first VCL NAL unit (type < 32) of an Annex B access unit.
std::optional<size_t> first_hevc_slice(const uint8_t* data, size_t size) {
  for (size_t i = 0; i + 3 < size; ++i) {
    if (data[i] != 0 || data[i + 1] != 0 || data[i + 2] != 1) continue;
    const size_t start = i > 0 && data[i - 1] == 0 ? i - 1 : i;
    if (((data[i + 3] >> 1) & 0x3f) < 32) return start;
    i += 2;
  }
  return std::nullopt;
}

// ---- AV1 (AV1 specification 5.3, 5.8, 6.7) ----

void put_leb128(std::vector<uint8_t>& b, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    b.push_back(byte | (v ? 0x80 : 0));
  } while (v);
}

void put_metadata_obu(std::vector<uint8_t>& out, int metadata_type, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> payload;
  put_leb128(payload, uint64_t(metadata_type));
  payload.insert(payload.end(), body.begin(), body.end());
  payload.push_back(0x80);                // trailing_bits
  out.push_back(uint8_t(5 << 3 | 1 << 1));  // OBU_METADATA, no extension, has a size field
  put_leb128(out, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
}

std::vector<uint8_t> av1_obus(const AVMasteringDisplayMetadata* d, const AVContentLightMetadata* l) {
  std::vector<uint8_t> out;
  if (l) {
    std::vector<uint8_t> b;
    put16(b, std::min(l->MaxCLL, 65535u));
    put16(b, std::min(l->MaxFALL, 65535u));
    put_metadata_obu(out, 1, b);  // METADATA_TYPE_HDR_CLL
  }
  if (has_display(d)) {
    // Red, green, blue in 0.16 fixed point; luminance max in 24.8, min in 18.14.
    std::vector<uint8_t> b;
    for (int c : {0, 1, 2}) {
      put16(b, fixed(d->display_primaries[c][0], 65536, 65535));
      put16(b, fixed(d->display_primaries[c][1], 65536, 65535));
    }
    put16(b, fixed(d->white_point[0], 65536, 65535));
    put16(b, fixed(d->white_point[1], 65536, 65535));
    put32(b, fixed(d->max_luminance, 256, UINT32_MAX));
    put32(b, fixed(d->min_luminance, 16384, UINT32_MAX));
    put_metadata_obu(out, 2, b);  // METADATA_TYPE_HDR_MDCV
  }
  return out;
}

// Offset of the first frame-carrying OBU (frame header, tile group, frame) of a temporal unit,
// after its temporal delimiter and sequence header; none when an OBU has no size field.
std::optional<size_t> first_av1_frame_obu(const uint8_t* data, size_t size) {
  for (size_t pos = 0; pos < size;) {
    const uint8_t header = data[pos];
    const int type = (header >> 3) & 0xf;
    if (type == 3 || type == 4 || type == 6) return pos;
    if (!(header & 0x02)) return std::nullopt;
    size_t at = pos + 1 + ((header & 0x04) ? 1 : 0);
    uint64_t length = 0;
    for (int shift = 0;; shift += 7) {
      if (at >= size || shift > 56) return std::nullopt;
      const uint8_t byte = data[at++];
      length |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80)) break;
    }
    if (length > size - at) return std::nullopt;
    pos = at + size_t(length);
  }
  return std::nullopt;
}

}  // namespace

std::shared_ptr<const HdrBitstreamInserter> HdrBitstreamInserter::make(AVCodecID codec,
                                                                       const AVMasteringDisplayMetadata* display,
                                                                       const AVContentLightMetadata* light) {
  if (!has_display(display) && !light) return nullptr;
  if (codec == AV_CODEC_ID_HEVC) return std::make_shared<HdrBitstreamInserter>(codec, hevc_sei(display, light));
  if (codec == AV_CODEC_ID_AV1) return std::make_shared<HdrBitstreamInserter>(codec, av1_obus(display, light));
  return nullptr;
}

void HdrBitstreamInserter::apply(AVPacket* packet) const {
  if (!packet->data || packet->size <= 0) return;
  std::optional<size_t> at;
  if (codec_ == AV_CODEC_ID_HEVC) at = first_hevc_slice(packet->data, size_t(packet->size));
  else if (packet->flags & AV_PKT_FLAG_KEY) at = first_av1_frame_obu(packet->data, size_t(packet->size));
  if (!at) return;
  const size_t size = size_t(packet->size) + units_.size();
  AVBufferRef* buffer = av_buffer_alloc(size + AV_INPUT_BUFFER_PADDING_SIZE);
  if (!buffer) throw Error(ErrorKind::Resource, "out of memory adding HDR10 metadata to a packet");
  std::memcpy(buffer->data, packet->data, *at);
  std::memcpy(buffer->data + *at, units_.data(), units_.size());
  std::memcpy(buffer->data + *at + units_.size(), packet->data + *at, size_t(packet->size) - *at);
  std::memset(buffer->data + size, 0, AV_INPUT_BUFFER_PADDING_SIZE);
  av_buffer_unref(&packet->buf);
  packet->buf = buffer;
  packet->data = buffer->data;
  packet->size = int(size);
}

bool encoder_needs_inserted_hdr(const char* encoder) {
  for (std::string_view name : {"hevc_nvenc", "av1_nvenc", "libaom-av1", "librav1e"})
    if (name == encoder) return true;
  return false;
}

}  // namespace framelift::media
