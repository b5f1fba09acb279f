#pragma once
// Writes the output container. The file is written under a temporary name in the output folder
// and renamed to its final name only by finish(), after it is complete and synced to disk; if the
// Muxer is destroyed before finish() (an error, a signal), the partial file is removed. So a file
// under the final name is always complete.
//
// Thread-safety: write() may be called from several threads (stream copy and encode); the rest
// is for one thread.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "media/av_ptr.h"
#include "media/subtitle_converter.h"
#include "util/fs.h"

namespace framelift::media {

class Muxer {
 public:
  // Throws Error(Output) when the folder is not writable or the container is unknown.
  explicit Muxer(std::filesystem::path final_path, const std::string& format_name = "");
  ~Muxer();
  Muxer(const Muxer&) = delete;
  Muxer& operator=(const Muxer&) = delete;

  // Adds the encoded video stream; returns its index. Copies the side data of `source` that stays
  // true after re-encoding (rotation, HDR mastering display and light level, stereo 3D).
  int add_video(const AVCodecContext* encoder, const AVStream* source);
  // Throws Error(Output) naming the container and the codec when the container cannot hold the
  // video `encoder` makes (ffv1 in .mp4): a job checks it before any segment is computed.
  void check_holds_video(const AVCodec* encoder) const;
  // Adds a video stream encoded earlier by framelift (a job's segments, see jobs/assemble.h):
  // parameters and time base from `encoded`, the rest as add_video does from `source`.
  int add_encoded_video(const AVStream* encoded, const AVStream* source, AVRational frame_rate);
  // Adds a bit-exact copy of an input stream (audio, subtitles, attachments, data); returns its
  // index. Two exceptions, each with one warning, where the container cannot hold the stream as
  // it is:
  // - cover art (an attached picture, as MP4 and MP3 keep it) goes to Matroska as an attachment
  //   named cover.EXT with its MIME type, the way Matroska keeps cover art; the picture's packet
  //   then writes nothing (write() skips it);
  // - text subtitles go into the text format the container holds (mov_text into Matroska as
  //   ASS, SubRip/ASS/WebVTT into MP4 as mov_text; media/subtitle_converter.h): write()
  //   converts each packet, timestamps kept, and leaves out the empty ones.
  // Otherwise throws Error(Output) naming the stream, the codec, and a container that holds it.
  int add_copy(const AVStream* source);
  // Container metadata and chapters, copied from the input.
  void copy_global_metadata(const AVFormatContext* input);
  // Adds side data to a stream when the input carried it on frames only (HDR10 SEI).
  void add_stream_side_data(int index, AVPacketSideDataType type, const uint8_t* data, size_t size);
  // The HDR mastering display and light level side data of a decoded frame, onto the stream.
  void add_hdr_side_data(int index, const AVFrame* frame);

  // Logs one warning naming the output when stream `index` carries a rotation (display matrix)
  // that this container cannot store (Matroska in FFmpeg 5.1). For final outputs only: a
  // job's segments never need it, assembly takes it from the source again.
  void warn_if_rotation_dropped(int index) const;

  void write_header();
  // Writes a packet whose timestamps are in `time_base` to stream `index`. Takes ownership of the
  // packet's reference.
  void write(AVPacket* packet, AVRational time_base, int index);
  // Packets given to the container for stream `index` so far, less the empty samples of mov_text
  // (media/subtitle_converter.h), which MOV muxers add and drop on their own; the read-back
  // compares them with the written file (jobs/output_check.h). After the writing threads are done.
  int64_t packets_written(int index) const;
  // The codec stream `index` is written in (a converted subtitle's differs from its source's).
  AVCodecID codec(int index) const { return format_->streams[index]->codecpar->codec_id; }
  // Writes the trailer, syncs, renames to the final name. Never replaces a file that appeared at
  // the final name after this Muxer was made: the result is then kept under another name and
  // Error(Output) says which. The same as close() then commit().
  void finish();
  // The two halves of finish(), for a caller that reads the complete file (temp_path()) back
  // before it takes the final name: close() writes the trailer and closes the file; commit()
  // renames it into place. Destroyed between the two, the Muxer removes the file.
  void close();
  void commit();
  // Whether packets written to stream `index` go into the file (not for a cover turned into an
  // attachment: its picture is the attachment itself).
  bool keeps_packets(int index) const { return !packetless_.count(index); }
  // The file finish() may replace: by default the one at the final name when this Muxer was made
  // (the caller checked -y just before). A job checks -y when it starts, hours before assembly
  // opens its output, and passes what was there then: a file that appeared since is kept.
  void set_replaceable(std::optional<FileIdentity> file) { replaceable_ = file; }

  // When the finished file cannot be renamed to its final name, finish() keeps it under another
  // name and its error says which (default). A job's segment says no: its work is redone.
  void keep_result_if_commit_fails(bool keep) { keep_on_failed_commit_ = keep; }

  const std::filesystem::path& final_path() const { return final_path_; }
  const std::filesystem::path& temp_path() const { return temp_path_; }

 private:
  void describe_like_source(AVStream* st, const AVStream* source);
  int add_cover_attachment(const AVStream* source);
  int add_converted_subtitle(const AVStream* source, AVCodecID target);
  std::string cannot_hold(const AVStream* source) const;
  void commit_final();
  void commit_into_place();

  std::filesystem::path final_path_;
  std::optional<FileIdentity> replaceable_;  // what was at final_path_ when opened
  std::filesystem::path temp_path_;
  bool keep_on_failed_commit_ = true;
  OutputFormatPtr format_;
  std::mutex mutex_;
  bool header_written_ = false;
  std::set<int> packetless_;  // attachment streams made from attached pictures
  std::map<int, std::unique_ptr<SubtitleConverter>> converters_;  // by output stream
  std::map<int, int64_t> written_;                                // packets per output stream
  bool finished_ = false;
};

}  // namespace framelift::media
