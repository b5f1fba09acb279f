#include "media/hdr_encoder_params.h"

#include "media/hdr_bitstream_insert.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/mastering_display_metadata.h>
}

namespace framelift::media {
namespace {

long scaled(AVRational q, double unit) { return std::lround(av_q2d(q) * unit); }

std::string decimal(AVRational q) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", av_q2d(q));
  return buf;
}

// Mastering display and content light level as (key, value) pairs in one library's syntax.
using Params = std::vector<std::pair<std::string, std::string>>;

// "G(x,y)B(x,y)R(x,y)WP(x,y)L(max,min)", green first (SMPTE ST 2086), each number as `text` writes
// it. Built by appending: GCC 12 misreads `"(" + std::string&&` as an overlapping memcpy (-Wrestrict).
template <class Text>
std::string mastering_display(const AVMasteringDisplayMetadata& md, Text text, double chroma_unit, double luma_unit) {
  std::string out;
  auto pair = [&](const char* key, AVRational a, AVRational b, double unit) {
    out.append(key).append("(").append(text(a, unit)).append(",").append(text(b, unit)).append(")");
  };
  const AVRational(*primaries)[2] = md.display_primaries;
  pair("G", primaries[1][0], primaries[1][1], chroma_unit);
  pair("B", primaries[2][0], primaries[2][1], chroma_unit);
  pair("R", primaries[0][0], primaries[0][1], chroma_unit);
  pair("WP", md.white_point[0], md.white_point[1], chroma_unit);
  pair("L", md.max_luminance, md.min_luminance, luma_unit);
  return out;
}

std::string light_level(const AVContentLightMetadata& cll) {
  return std::to_string(cll.MaxCLL).append(",").append(std::to_string(cll.MaxFALL));
}

Params x265_params(const AVMasteringDisplayMetadata* md, const AVContentLightMetadata* cll) {
  Params p;
  // x265: chromaticities in 1/50000, luminance in 1/10000 cd/m2.
  auto integer = [](AVRational q, double unit) { return std::to_string(scaled(q, unit)); };
  if (md && md->has_primaries && md->has_luminance)
    p.emplace_back("master-display", mastering_display(*md, integer, 50000, 10000));
  if (cll) p.emplace_back("max-cll", light_level(*cll));
  return p;
}

Params svtav1_params(const AVMasteringDisplayMetadata* md, const AVContentLightMetadata* cll) {
  Params p;
  // SVT-AV1: the same order and shape, in plain decimals (cd/m2 for luminance).
  auto plain = [](AVRational q, double) { return decimal(q); };
  if (md && md->has_primaries && md->has_luminance)
    p.emplace_back("mastering-display", mastering_display(*md, plain, 1, 1));
  if (cll) p.emplace_back("content-light", light_level(*cll));
  return p;
}

// Appends `add` to a "k=v:k=v" parameter string, skipping keys it already has.
std::string merged(const std::string& given, const Params& add) {
  std::set<std::string> keys;
  for (size_t start = 0; start < given.size();) {
    const size_t end = std::min(given.find(':', start), given.size());
    const std::string item = given.substr(start, end - start);
    keys.insert(item.substr(0, item.find('=')));
    start = end + 1;
  }
  std::string out = given;
  for (const auto& [k, v] : add)
    if (!keys.count(k)) out += (out.empty() ? "" : ":") + k + "=" + v;
  return out;
}

}  // namespace

EncoderSettings with_hdr_bitstream_params(EncoderSettings settings, const AVFrame* frame) {
  if (!frame) return settings;
  const AVFrameSideData* md = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA);
  const AVFrameSideData* cll = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL);
  if (!md && !cll) return settings;
  const auto* display = md ? reinterpret_cast<const AVMasteringDisplayMetadata*>(md->data) : nullptr;
  const auto* light = cll ? reinterpret_cast<const AVContentLightMetadata*>(cll->data) : nullptr;
  const AVCodec* encoder = find_video_encoder(settings.codec);
  const std::string library = encoder->name;
  if (encoder_needs_inserted_hdr(encoder->name)) {
    settings.hdr_insert = HdrBitstreamInserter::make(encoder->id, display, light);
    return settings;
  }
  const char* key = library == "libx265" ? "x265-params" : library == "libsvtav1" ? "svtav1-params" : nullptr;
  if (!key) return settings;
  const Params params = library == "libx265" ? x265_params(display, light) : svtav1_params(display, light);
  auto given = settings.options.find(key);
  const std::string value = merged(given == settings.options.end() ? "" : given->second, params);
  if (!value.empty()) settings.options[key] = value;
  return settings;
}

}  // namespace framelift::media
