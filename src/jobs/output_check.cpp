#include "jobs/output_check.h"

extern "C" {
#include <libavformat/avformat.h>
}

#include "media/av_error.h"
#include "media/av_ptr.h"
#include "media/subtitle_converter.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::jobs {
namespace {

std::string describe(AVMediaType type, AVCodecID codec, int input_index) {
  const char* kind = av_get_media_type_string(type);
  return str(kind ? kind : "data", " stream #", input_index, " of the input (", avcodec_get_name(codec), ")");
}

struct Found {
  AVMediaType type;
  AVCodecID codec;
  bool attached_pic;
  int64_t packets = 0;
};

Found found_stream(const AVStream* st) {
  return {st->codecpar->codec_type, st->codecpar->codec_id, (st->disposition & AV_DISPOSITION_ATTACHED_PIC) != 0};
}

// An attachment is its file, not packets; Matroska readers present an image attachment (cover
// art) as a video stream of one attached picture.
bool is_promised_stream(const Found& f, const PromisedStream& p) {
  if (f.codec != p.codec) return false;
  if (p.type == AVMEDIA_TYPE_ATTACHMENT) return f.type == AVMEDIA_TYPE_ATTACHMENT || (f.type == AVMEDIA_TYPE_VIDEO && f.attached_pic);
  return f.type == p.type;
}

// Every stream of `file` with its packets, counted by reading the file to its end.
std::vector<Found> read_back(const std::filesystem::path& file, const std::filesystem::path& output) {
  // Plain libavformat, not media::Demuxer: no timestamp mending, no video stream required, no
  // stop check; what a player would see.
  AVFormatContext* raw = nullptr;
  int ret = avformat_open_input(&raw, file.c_str(), nullptr, nullptr);
  if (ret < 0)
    throw Error(ErrorKind::Output, str(output.string(), ": the written file does not open (", media::av_error_text(ret),
                                       "); not written"));
  std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> format(raw, [](AVFormatContext* f) { avformat_close_input(&f); });
  std::vector<Found> found;
  for (unsigned i = 0; i < raw->nb_streams; ++i) found.push_back(found_stream(raw->streams[i]));
  media::PacketPtr pkt = media::make_packet();
  while ((ret = av_read_frame(raw, pkt.get())) >= 0) {
    if (pkt->stream_index >= 0 && size_t(pkt->stream_index) < found.size() &&
        !media::is_empty_subtitle_sample(found[size_t(pkt->stream_index)].codec, *pkt))
      ++found[size_t(pkt->stream_index)].packets;
    av_packet_unref(pkt.get());
  }
  if (ret != AVERROR_EOF)
    throw Error(ErrorKind::Output, str(output.string(), ": the written file does not read to its end (",
                                       media::av_error_text(ret), "); not written"));
  // A stream the demuxer found only while reading (none should be) counts as one nobody promised.
  for (unsigned i = unsigned(found.size()); i < raw->nb_streams; ++i)
    found.push_back(found_stream(raw->streams[i]));
  return found;
}

}  // namespace

void check_output_streams(const std::filesystem::path& file, const std::filesystem::path& output,
                          const std::vector<PromisedStream>& promised, bool exact_packets) {
  const std::vector<Found> found = read_back(file, output);
  size_t next = 0;
  for (const PromisedStream& p : promised) {
    const std::string what = describe(p.type, p.codec, p.input_index);
    if (next >= found.size() || !is_promised_stream(found[next], p))
      throw Error(ErrorKind::Output, str(output.string(), ": the ", what, " is missing from the written file; not written"));
    if (exact_packets && p.type != AVMEDIA_TYPE_ATTACHMENT && found[next].packets != p.packets)
      throw Error(ErrorKind::Output, str(output.string(), ": the ", what, " has ", found[next].packets,
                                         " packets in the written file where ", p.packets, " were written; not written"));
    ++next;
  }
  if (next < found.size())
    throw Error(ErrorKind::Output, str(output.string(), ": the written file holds ", found.size(), " streams, ",
                                       promised.size(), " were written; not written"));
}

}  // namespace framelift::jobs
