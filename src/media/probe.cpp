#include "media/probe.h"

extern "C" {
#include <libavutil/display.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/pixdesc.h>
}

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "media/demuxer.h"
#include "util/str.h"

namespace framelift::media {
namespace {

using nlohmann::json;

std::string name_or(const char* s, const char* fallback = "unknown") { return s ? s : fallback; }

json rational(AVRational r) { return r.den ? json(av_q2d(r)) : json(nullptr); }

json side_data(const AVStream* st) {
  json out = json::object();
  for (int i = 0; i < st->nb_side_data; ++i) {
    const AVPacketSideData& sd = st->side_data[i];
    if (sd.type == AV_PKT_DATA_DISPLAYMATRIX && sd.size >= 9 * 4) {
      out["rotation"] = av_display_rotation_get(reinterpret_cast<const int32_t*>(sd.data));
    } else if (sd.type == AV_PKT_DATA_MASTERING_DISPLAY_METADATA) {
      auto* m = reinterpret_cast<const AVMasteringDisplayMetadata*>(sd.data);
      out["mastering_display"] = {{"max_luminance", av_q2d(m->max_luminance)},
                                  {"min_luminance", av_q2d(m->min_luminance)}};
    } else if (sd.type == AV_PKT_DATA_CONTENT_LIGHT_LEVEL) {
      auto* c = reinterpret_cast<const AVContentLightMetadata*>(sd.data);
      out["content_light_level"] = {{"max_cll", c->MaxCLL}, {"max_fall", c->MaxFALL}};
    }
  }
  return out;
}

// Reads all packets once: exact video packet count (one packet is one frame for every codec
// framelift handles), whether the spacing of timestamps varies, and each stream's bytes (what
// a job copies of the other streams into its output: the planner's disk estimate).
void count_packets(Demuxer& demux, json& streams) {
  PacketPtr pkt = make_packet();
  std::vector<int64_t> pts;
  std::vector<int64_t> bytes(streams.size(), 0);
  while (demux.read(pkt.get())) {
    if (pkt->stream_index >= 0 && size_t(pkt->stream_index) < bytes.size()) bytes[pkt->stream_index] += pkt->size;
    if (pkt->stream_index == demux.video_index() && pkt->pts != AV_NOPTS_VALUE) pts.push_back(pkt->pts);
  }
  // An attachment (a font, cover art in Matroska) has no packets: its file is the extradata.
  for (size_t i = 0; i < bytes.size(); ++i) {
    const AVCodecParameters* p = demux.format()->streams[i]->codecpar;
    streams[i]["packet_bytes"] = bytes[i] + (p->codec_type == AVMEDIA_TYPE_ATTACHMENT ? p->extradata_size : 0);
  }
  if (demux.video_index() < 0) return;
  json& v = streams[demux.video_index()];
  std::sort(pts.begin(), pts.end());
  v["frame_count"] = pts.size();
  v["frame_count_exact"] = !demux.ended_early();
  std::map<int64_t, int> gaps;
  for (size_t i = 1; i < pts.size(); ++i) gaps[pts[i] - pts[i - 1]]++;
  // One or two distinct gaps can be rounding in a coarse time base (1 ms in Matroska).
  bool variable = false;
  if (gaps.size() > 1) {
    int64_t lo = gaps.begin()->first, hi = gaps.rbegin()->first;
    variable = hi - lo > 1;
  }
  v["variable_frame_rate"] = variable;
}

}  // namespace

json probe(const std::string& url, const ProbeOptions& options) {
  Demuxer demux(url);
  AVFormatContext* fmt = demux.format();
  json info{{"file", url},
            {"container", fmt->iformat->name},
            {"duration_s", fmt->duration > 0 ? json(fmt->duration / double(AV_TIME_BASE)) : json(nullptr)},
            {"bit_rate", fmt->bit_rate},
            {"chapters", fmt->nb_chapters}};
  json streams = json::array();
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    const AVStream* st = fmt->streams[i];
    const AVCodecParameters* p = st->codecpar;
    json s{{"index", i}, {"type", name_or(av_get_media_type_string(p->codec_type))},
           {"codec", avcodec_get_name(p->codec_id)}};
    if (const AVDictionaryEntry* lang = av_dict_get(st->metadata, "language", nullptr, 0)) s["language"] = lang->value;
    if (p->codec_type == AVMEDIA_TYPE_VIDEO) {
      const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(AVPixelFormat(p->format));
      s["width"] = p->width;
      s["height"] = p->height;
      s["pix_fmt"] = name_or(d ? d->name : nullptr);
      s["bit_depth"] = d ? d->comp[0].depth : 0;
      s["bits_per_pixel"] = d ? av_get_bits_per_pixel(d) : 0;  // uncompressed: 12 for 8-bit 4:2:0
      s["frame_rate"] = rational(av_guess_frame_rate(fmt, const_cast<AVStream*>(st), nullptr));
      s["avg_frame_rate"] = rational(st->avg_frame_rate);
      s["color"] = {{"primaries", name_or(av_color_primaries_name(p->color_primaries))},
                    {"transfer", name_or(av_color_transfer_name(p->color_trc))},
                    {"matrix", name_or(av_color_space_name(p->color_space))},
                    {"range", name_or(av_color_range_name(p->color_range))}};
      s["hdr"] = p->color_trc == AVCOL_TRC_SMPTE2084 || p->color_trc == AVCOL_TRC_ARIB_STD_B67;
      json sd = side_data(st);
      if (!sd.empty()) s["side_data"] = sd;
      if (st->nb_frames > 0) s["frame_count"] = st->nb_frames;
    } else if (p->codec_type == AVMEDIA_TYPE_AUDIO) {
      s["sample_rate"] = p->sample_rate;
      s["channels"] = p->ch_layout.nb_channels;
    } else if (p->codec_type == AVMEDIA_TYPE_ATTACHMENT) {
      if (const AVDictionaryEntry* f = av_dict_get(st->metadata, "filename", nullptr, 0)) s["filename"] = f->value;
    }
    streams.push_back(s);
  }
  int v = demux.video_index();
  if (options.count_frames) count_packets(demux, streams);
  info["streams"] = streams;
  info["video_stream"] = v;
  return info;
}

std::string probe_text(const json& info) {
  std::ostringstream out;
  out << info["file"].get<std::string>() << " (" << info["container"].get<std::string>() << ")";
  if (!info["duration_s"].is_null()) out << ", " << info["duration_s"].get<double>() << " s";
  out << ", " << info["chapters"].get<int>() << " chapter(s)\n";
  for (const json& s : info["streams"]) {
    out << "  #" << s["index"].get<int>() << " " << s["type"].get<std::string>() << ": "
        << s["codec"].get<std::string>();
    if (s["type"] == "video") {
      out << " " << s["width"].get<int>() << "x" << s["height"].get<int>() << " " << s["pix_fmt"].get<std::string>()
          << " (" << s["bit_depth"].get<int>() << "-bit)";
      if (!s["frame_rate"].is_null()) out << " " << s["frame_rate"].get<double>() << " fps";
      if (s.contains("variable_frame_rate") && s["variable_frame_rate"].get<bool>()) out << " variable";
      if (s.contains("frame_count")) out << ", " << s["frame_count"].get<int64_t>() << " frames";
      out << ", color " << s["color"]["matrix"].get<std::string>() << "/" << s["color"]["transfer"].get<std::string>()
          << "/" << s["color"]["range"].get<std::string>();
      if (s["hdr"].get<bool>()) out << ", HDR";
      if (s.contains("side_data")) out << ", " << s["side_data"].dump();
    } else if (s["type"] == "audio") {
      out << " " << s["sample_rate"].get<int>() << " Hz, " << s["channels"].get<int>() << " ch";
    }
    if (s.contains("language")) out << " [" << s["language"].get<std::string>() << "]";
    if (s.contains("filename")) out << " " << s["filename"].get<std::string>();
    out << "\n";
  }
  return out.str();
}

}  // namespace framelift::media
