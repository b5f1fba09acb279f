#include "media/muxer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstring>

extern "C" {
#include <libavutil/display.h>
}

#include "media/av_error.h"
#include "media/hdr_side_data.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::media {
namespace {

// Side data that still describes the video after it is decoded, processed and re-encoded.
bool keeps_meaning_after_reencode(AVPacketSideDataType type) {
  switch (type) {
    case AV_PKT_DATA_DISPLAYMATRIX:
    case AV_PKT_DATA_MASTERING_DISPLAY_METADATA:
    case AV_PKT_DATA_CONTENT_LIGHT_LEVEL:
    case AV_PKT_DATA_STEREO3D:
    case AV_PKT_DATA_SPHERICAL:
      return true;
    default:
      return false;
  }
}

// The muxers of FFmpeg 5.1 that write a stream's display matrix (the MOV family's track
// header); Matroska learnt it only in later versions.
bool writes_display_matrix(const AVOutputFormat* format) {
  for (const char* name : {"mov", "mp4", "3gp", "3g2", "psp", "ipod", "ismv", "f4v"})
    if (strcmp(format->name, name) == 0) return true;
  return false;
}

// Matroska is the one container FFmpeg 5.1 writes attached files (fonts, covers) into; the
// others fail on them in write_header with "Invalid argument", which names nothing.
bool holds_attachments(const AVOutputFormat* format) { return strcmp(format->name, "matroska") == 0; }

}  // namespace

Muxer::Muxer(fs::path final_path, const std::string& format_name)
    : final_path_(std::move(final_path)), replaceable_(file_identity(final_path_)) {
  // Partial files of earlier runs killed before they could clean up (SIGKILL, power loss).
  remove_orphaned_partials(final_path_);
  temp_path_ = partial_path_for(final_path_);
  const AVOutputFormat* ofmt = av_guess_format(format_name.empty() ? nullptr : format_name.c_str(),
                                               final_path_.filename().c_str(), nullptr);
  if (!ofmt)
    throw Error(ErrorKind::Usage, str(final_path_.string(), ": unknown output container (use a known extension such as .mkv or .mp4)"));
  AVFormatContext* raw = nullptr;
  check(avformat_alloc_output_context2(&raw, ofmt, nullptr, temp_path_.c_str()), ErrorKind::Output,
        final_path_.string());
  format_.reset(raw);
  // Stream copy must not fail on codecs libavformat marks experimental in a container (FLAC or
  // Opus in MP4): they play in current players, and refusing would drop the user's audio.
  format_->strict_std_compliance = FF_COMPLIANCE_EXPERIMENTAL;
  if (!(ofmt->flags & AVFMT_NOFILE)) {
    int ret = avio_open(&format_->pb, temp_path_.c_str(), AVIO_FLAG_WRITE);
    if (ret < 0)
      throw Error(ErrorKind::Output, str(final_path_.string(), ": cannot write in ",
                                         final_path_.parent_path().string(), " (", av_error_text(ret), ")"));
  }
}

Muxer::~Muxer() {
  if (format_ && format_->pb) avio_closep(&format_->pb);
  if (!finished_) {
    std::error_code ec;
    fs::remove(temp_path_, ec);
  }
}

void Muxer::check_holds_video(const AVCodec* encoder) const {
  if (avformat_query_codec(format_->oformat, encoder->id, FF_COMPLIANCE_NORMAL) == 0)
    throw Error(ErrorKind::Output, str(final_path_.string(), ": the ", format_->oformat->name, " container cannot hold ",
                                       avcodec_get_name(encoder->id), " video (-c ", encoder->name,
                                       "); use .mkv, or another encoder"));
}

int Muxer::add_video(const AVCodecContext* enc, const AVStream* source) {
  check_holds_video(enc->codec);
  AVStream* st = avformat_new_stream(format_.get(), nullptr);
  if (!st) throw Error(ErrorKind::Resource, "out of memory adding a stream");
  check(avcodec_parameters_from_context(st->codecpar, enc), ErrorKind::Output, final_path_.string());
  st->time_base = enc->time_base;
  st->avg_frame_rate = enc->framerate;
  st->sample_aspect_ratio = enc->sample_aspect_ratio;
  if (source) describe_like_source(st, source);
  return st->index;
}

int Muxer::add_encoded_video(const AVStream* encoded, const AVStream* source, AVRational frame_rate) {
  AVStream* st = avformat_new_stream(format_.get(), nullptr);
  if (!st) throw Error(ErrorKind::Resource, "out of memory adding a stream");
  check(avcodec_parameters_copy(st->codecpar, encoded->codecpar), ErrorKind::Output, final_path_.string());
  st->codecpar->codec_tag = 0;
  st->time_base = encoded->time_base;
  st->avg_frame_rate = frame_rate;
  // A segment's container may hold the aspect where its bitstream does not (FFV1 in Matroska).
  const AVRational container_sar = encoded->sample_aspect_ratio;
  if (container_sar.num > 0 && container_sar.den > 0) st->codecpar->sample_aspect_ratio = container_sar;
  st->sample_aspect_ratio = st->codecpar->sample_aspect_ratio;
  for (int i = 0; i < encoded->nb_side_data; ++i) {
    const AVPacketSideData& sd = encoded->side_data[i];
    add_stream_side_data(st->index, sd.type, sd.data, sd.size);
  }
  if (source) describe_like_source(st, source);
  return st->index;
}

void Muxer::describe_like_source(AVStream* st, const AVStream* source) {
  av_dict_copy(&st->metadata, source->metadata, 0);
  // The encoder's name is not the input's; drop tags that would now lie.
  av_dict_set(&st->metadata, "encoder", nullptr, 0);
  av_dict_set(&st->metadata, "DURATION", nullptr, 0);
  for (int i = 0; i < source->nb_side_data; ++i) {
    const AVPacketSideData& sd = source->side_data[i];
    if (keeps_meaning_after_reencode(sd.type)) add_stream_side_data(st->index, sd.type, sd.data, sd.size);
  }
}

namespace {

// A cover's MIME type and file extension, for the codecs pictures come in; nullptr for others.
const char* cover_mime(AVCodecID id, const char** ext) {
  switch (id) {
    case AV_CODEC_ID_PNG: *ext = "png"; return "image/png";
    case AV_CODEC_ID_MJPEG: *ext = "jpg"; return "image/jpeg";
    case AV_CODEC_ID_BMP: *ext = "bmp"; return "image/bmp";
    case AV_CODEC_ID_GIF: *ext = "gif"; return "image/gif";
    case AV_CODEC_ID_WEBP: *ext = "webp"; return "image/webp";
    default: return nullptr;
  }
}

}  // namespace

int Muxer::add_cover_attachment(const AVStream* source) {
  const char* ext = nullptr;
  const char* mime = cover_mime(source->codecpar->codec_id, &ext);
  const AVPacket& pic = source->attached_pic;
  AVStream* st = avformat_new_stream(format_.get(), nullptr);
  if (!st) throw Error(ErrorKind::Resource, "out of memory adding a stream");
  st->codecpar->codec_type = AVMEDIA_TYPE_ATTACHMENT;
  st->codecpar->codec_id = source->codecpar->codec_id;
  // Matroska writes an attachment's extradata as the attached file.
  st->codecpar->extradata = static_cast<uint8_t*>(av_mallocz(size_t(pic.size) + AV_INPUT_BUFFER_PADDING_SIZE));
  if (!st->codecpar->extradata) throw Error(ErrorKind::Resource, "out of memory copying the cover art");
  memcpy(st->codecpar->extradata, pic.data, size_t(pic.size));
  st->codecpar->extradata_size = pic.size;
  av_dict_copy(&st->metadata, source->metadata, 0);
  av_dict_set(&st->metadata, "filename", str("cover.", ext).c_str(), 0);
  av_dict_set(&st->metadata, "mimetype", mime, 0);
  packetless_.insert(st->index);
  return st->index;
}

int Muxer::add_copy(const AVStream* source) {
  const AVCodecParameters* par = source->codecpar;
  const char* ext = nullptr;
  if ((source->disposition & AV_DISPOSITION_ATTACHED_PIC) && source->attached_pic.size > 0 &&
      holds_attachments(format_->oformat) && cover_mime(par->codec_id, &ext))
    return add_cover_attachment(source);
  if (par->codec_type == AVMEDIA_TYPE_ATTACHMENT ? !holds_attachments(format_->oformat)
                                                  : avformat_query_codec(format_->oformat, par->codec_id, FF_COMPLIANCE_NORMAL) == 0) {
    const AVCodecID target = text_subtitle_target(format_->oformat, par->codec_id);
    if (target == AV_CODEC_ID_NONE) throw Error(ErrorKind::Output, cannot_hold(source));
    return add_converted_subtitle(source, target);
  }
  AVStream* st = avformat_new_stream(format_.get(), nullptr);
  if (!st) throw Error(ErrorKind::Resource, "out of memory adding a stream");
  check(avcodec_parameters_copy(st->codecpar, par), ErrorKind::Output, final_path_.string());
  st->codecpar->codec_tag = 0;  // let the muxer choose the tag valid for its container
  st->time_base = source->time_base;
  st->disposition = source->disposition;
  st->avg_frame_rate = source->avg_frame_rate;
  av_dict_copy(&st->metadata, source->metadata, 0);
  for (int i = 0; i < source->nb_side_data; ++i) {
    const AVPacketSideData& sd = source->side_data[i];
    add_stream_side_data(st->index, sd.type, sd.data, sd.size);
  }
  return st->index;
}

int Muxer::add_converted_subtitle(const AVStream* source, AVCodecID target) {
  const std::string what = str(final_path_.string(), ": subtitle stream #", source->index);
  auto converter = std::make_unique<SubtitleConverter>(source, target, what);
  AVStream* st = avformat_new_stream(format_.get(), nullptr);
  if (!st) throw Error(ErrorKind::Resource, "out of memory adding a stream");
  converter->fill_parameters(st->codecpar);
  st->time_base = source->time_base;
  st->disposition = source->disposition;
  av_dict_copy(&st->metadata, source->metadata, 0);
  log::warn(what, " (", avcodec_get_name(source->codecpar->codec_id), ") is converted to ", avcodec_get_name(target),
            ": the ", format_->oformat->name, " container cannot hold it as it is; its text and timing are kept");
  converters_[st->index] = std::move(converter);
  return st->index;
}

// The refusal of a stream this container cannot hold, with a container that can.
std::string Muxer::cannot_hold(const AVStream* source) const {
  const AVCodecID id = source->codecpar->codec_id;
  const char* kind = av_get_media_type_string(source->codecpar->codec_type);
  std::string line = str(final_path_.string(), ": the ", format_->oformat->name, " container cannot hold the ",
                         kind ? kind : "data", " stream #", source->index, " (", avcodec_get_name(id), ")");
  for (auto [name, extension] : {std::pair{"matroska", ".mkv"}, {"mp4", ".mp4"}, {"mov", ".mov"}}) {
    const AVOutputFormat* other = av_guess_format(name, nullptr, nullptr);
    if (!other || other == format_->oformat) continue;
    const bool holds = source->codecpar->codec_type == AVMEDIA_TYPE_ATTACHMENT
                           ? holds_attachments(other)
                           : avformat_query_codec(other, id, FF_COMPLIANCE_NORMAL) == 1;
    if (holds) return str(line, "; use ", extension, ", which holds it");
  }
  return str(line, "; remux the input without it first (ffmpeg -i INPUT -map 0 -map -0:", source->index, " -c copy OUTPUT)");
}

void Muxer::copy_global_metadata(const AVFormatContext* in) {
  av_dict_copy(&format_->metadata, in->metadata, 0);
  av_dict_set(&format_->metadata, "encoder", nullptr, 0);
  if (in->nb_chapters == 0) return;
  auto** chapters = static_cast<AVChapter**>(av_calloc(in->nb_chapters, sizeof(AVChapter*)));
  if (!chapters) throw Error(ErrorKind::Resource, "out of memory copying chapters");
  format_->chapters = chapters;
  for (unsigned i = 0; i < in->nb_chapters; ++i) {
    const AVChapter* src = in->chapters[i];
    auto* ch = static_cast<AVChapter*>(av_mallocz(sizeof(AVChapter)));
    if (!ch) throw Error(ErrorKind::Resource, "out of memory copying chapters");
    ch->id = src->id;
    ch->time_base = src->time_base;
    ch->start = src->start;
    ch->end = src->end;
    av_dict_copy(&ch->metadata, src->metadata, 0);
    format_->chapters[format_->nb_chapters++] = ch;
  }
}

void Muxer::add_stream_side_data(int index, AVPacketSideDataType type, const uint8_t* data, size_t size) {
  AVStream* st = format_->streams[index];
  for (int i = 0; i < st->nb_side_data; ++i)
    if (st->side_data[i].type == type) return;
  uint8_t* dst = av_stream_new_side_data(st, type, size);
  if (!dst) throw Error(ErrorKind::Resource, "out of memory copying stream side data");
  memcpy(dst, data, size);
}

void Muxer::add_hdr_side_data(int index, const AVFrame* frame) {
  for (auto [frame_type, packet_type] : kHdrSideData)
    if (const AVFrameSideData* sd = av_frame_get_side_data(frame, frame_type))
      add_stream_side_data(index, packet_type, sd->data, sd->size);
}

void Muxer::warn_if_rotation_dropped(int index) const {
  const AVStream* st = format_->streams[index];
  const uint8_t* matrix = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, nullptr);
  if (!matrix || writes_display_matrix(format_->oformat)) return;
  const double degrees = av_display_rotation_get(reinterpret_cast<const int32_t*>(matrix));
  if (std::isnan(degrees) || std::lround(degrees) % 360 == 0) return;  // a flip or no turn at all
  log::warn(final_path_.string(), ": the ", format_->oformat->name, " container cannot hold the source's rotation (",
            std::lround(std::fabs(degrees)), " degrees); it is dropped, the picture is stored unrotated ",
            "(use .mp4 or .mov to keep it)");
}

void Muxer::write_header() {
  int ret = avformat_write_header(format_.get(), nullptr);
  if (ret < 0)
    throw Error(ErrorKind::Output, str(final_path_.string(), ": cannot write the ", format_->oformat->name,
                                       " header (", av_error_text(ret), ")"));
  header_written_ = true;
}

void Muxer::write(AVPacket* packet, AVRational time_base, int index) {
  std::lock_guard lock(mutex_);
  if (packetless_.count(index)) return;  // the cover went in as an attachment
  PacketPtr converted;
  if (auto it = converters_.find(index); it != converters_.end()) {
    converted = it->second->convert(packet, time_base);
    av_packet_unref(packet);
    if (!converted) return;  // an empty subtitle: nothing to show
    packet = converted.get();
  }
  AVStream* st = format_->streams[index];
  packet->stream_index = index;
  av_packet_rescale_ts(packet, time_base, st->time_base);
  packet->pos = -1;
  const bool shows_something = !is_empty_subtitle_sample(st->codecpar->codec_id, *packet);
  int ret = av_interleaved_write_frame(format_.get(), packet);
  if (ret < 0) throw Error(ErrorKind::Output, str(final_path_.string(), ": write failed (", av_error_text(ret), ")"));
  if (shows_something) ++written_[index];
}

int64_t Muxer::packets_written(int index) const {
  auto it = written_.find(index);
  return it == written_.end() ? 0 : it->second;
}

void Muxer::finish() {
  close();
  commit();
}

void Muxer::close() {
  std::lock_guard lock(mutex_);
  int ret = av_write_trailer(format_.get());
  if (ret < 0) throw Error(ErrorKind::Output, str(final_path_.string(), ": write failed (", av_error_text(ret), ")"));
  if (format_->pb) {
    avio_flush(format_->pb);
    if (format_->pb->error < 0)
      throw Error(ErrorKind::Output, str(final_path_.string(), ": write failed (", av_error_text(format_->pb->error), ")"));
    ret = avio_closep(&format_->pb);
    if (ret < 0) throw Error(ErrorKind::Output, str(final_path_.string(), ": write failed (", av_error_text(ret), ")"));
  }
}

void Muxer::commit() {
  std::lock_guard lock(mutex_);
  commit_final();
}

void Muxer::commit_final() {
  try {
    commit_into_place();
  } catch (const Error& e) {
    std::error_code ec;
    // Renamed already (only the folder's sync failed): the result is in place, the error stands.
    if (!keep_on_failed_commit_ || e.kind() != ErrorKind::Output || !fs::exists(temp_path_, ec)) throw;
    // The file is complete: a rename that failed must not take the run's work with it. A second
    // name next to it may still work (a transient fault); else it stays under its partial name.
    finished_ = true;
    fs::path kept = temp_path_;
    std::string advice;
    try {
      kept = commit_file_aside(temp_path_, final_path_);
    } catch (const Error&) {
      advice = " (move it away: the next run on this output clears partial files)";
    }
    throw Error(ErrorKind::Output, str(e.what(), "; the finished result was kept as ", kept.string(), advice));
  }
}

void Muxer::commit_into_place() {
  // Only the file that was at the final name when this output was opened may be replaced (the
  // caller checked -y then); one that appeared since belongs to someone else.
  if (replaceable_ && file_identity(final_path_) == replaceable_) {
    commit_file(temp_path_, final_path_);
    finished_ = true;
    return;
  }
  if (commit_file_no_replace(temp_path_, final_path_)) {
    finished_ = true;
    return;
  }
  const fs::path aside = commit_file_aside(temp_path_, final_path_);
  finished_ = true;
  throw Error(ErrorKind::Output, str(final_path_.string(), ": a file appeared there while this run was going and was "
                                     "left alone; the finished result was kept as ", aside.string()));
}

}  // namespace framelift::media
