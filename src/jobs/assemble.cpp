#include "jobs/assemble.h"

#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

extern "C" {
#include <libavutil/mathematics.h>
}

#include "jobs/fingerprint.h"
#include "jobs/output_check.h"
#include "media/decoder.h"
#include "media/demuxer.h"
#include "media/muxer.h"
#include "util/crash_point.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/stop.h"
#include "util/str.h"

namespace framelift::jobs {
namespace {

// The segments' video packets, one segment after the other, as one stream.
class SegmentReader {
 public:
  SegmentReader(const JobDir& dir, const std::map<int, SegmentRecord>& records, int count)
      : dir_(dir), records_(records), count_(count) {}

  // The next packet with the encoder's own timestamps (in time_base()), or false after the last
  // segment.
  bool next(AVPacket* pkt) {
    for (;;) {
      const SegmentRecord& record = records_.at(index_ < count_ ? index_ : count_ - 1);
      if (!demux_) {
        if (index_ >= count_) return false;
        if (records_.at(index_).packets.empty()) {  // a stage (select) dropped all its frames
          ++index_;
          continue;
        }
        demux_ = std::make_unique<media::Demuxer>(dir_.segment_file(index_).string());
        packet_ = 0;
      }
      if (demux_->read(pkt)) {
        if (pkt->stream_index != demux_->video_index()) continue;
        if (packet_ >= record.packets.size()) break;
        pkt->pts = record.packets[packet_][0];
        pkt->dts = record.packets[packet_][1];
        pkt->duration = record.packets[packet_][2];
        ++packet_;
        time_base_ = AVRational{record.time_base_num, record.time_base_den};
        return true;
      }
      if (demux_->ended_early() || packet_ != record.packets.size()) break;
      demux_.reset();
      ++index_;
    }
    throw Error(ErrorKind::Input, str(dir_.segment_file(index_).string(),
                                      ": holds other packets than its journal record; delete it and resume"));
  }
  AVRational time_base() const { return time_base_; }

 private:
  const JobDir& dir_;
  const std::map<int, SegmentRecord>& records_;
  int count_;
  int index_ = 0;
  size_t packet_ = 0;
  std::unique_ptr<media::Demuxer> demux_;
  AVRational time_base_{1, 1};
};

media::FramePtr first_video_frame(const std::string& input) {
  media::Demuxer demux(input);
  media::Decoder decoder(demux.video_stream(), {}, input);
  media::FramePtr frame;
  media::PacketPtr pkt = media::make_packet();
  auto keep = [&](media::FramePtr f) {
    if (!frame) frame = std::move(f);
  };
  while (!frame && demux.read(pkt.get()))
    if (pkt->stream_index == demux.video_index()) decoder.decode(pkt.get(), keep);
  if (!frame) decoder.decode(nullptr, keep);
  return frame;
}

// assembled.json: the device and inode of the file about to become the output, written before
// the rename into place, which keeps both. Written after it, a run killed between the two would
// leave a complete output that the next run could not tell from a file someone else put there.
void record_assembly(const JobDir& dir, const std::filesystem::path& file) {
  if (const std::optional<FileIdentity> made = file_identity(file))
    write_file_atomic(dir.assembled_file(), nlohmann::json{{"device", made->device}, {"inode", made->inode}}.dump() + "\n");
}

// The input as planned: the same file (its fingerprint, which the job's spec recorded), else the
// other streams copied now would not be the ones the segments' video was made with.
void check_input_unchanged(const JobSpec& spec) {
  if (spec.input_fingerprint.empty() || fingerprint_input(spec.input) == spec.input_fingerprint) return;
  throw Error(ErrorKind::Input, str(spec.input, ": changed since the job was planned; its other streams would not match ",
                                    "the segments, so the output is not written (run again with --restart to start over)"));
}

// Every other stream yields the packets the plan counted (plans older than the count: no check).
// A file rewritten in the middle, a read cut short or a stream that appeared would otherwise
// lose packets without a word.
void check_packets_as_planned(const JobSpec& spec, const SegmentPlan& plan, const std::map<int, int64_t>& read) {
  if (!plan.other_packets) return;
  const std::map<int, int64_t>& planned = *plan.other_packets;
  auto count = [](const std::map<int, int64_t>& m, int i) { auto it = m.find(i); return it == m.end() ? 0 : it->second; };
  std::map<int, int64_t> all = planned;
  all.insert(read.begin(), read.end());
  for (const auto& [index, ignored] : all)
    if (count(read, index) != count(planned, index))
      throw Error(ErrorKind::Input, str(spec.input, ": stream #", index, " yields ", count(read, index), " packets now, ",
                                        count(planned, index), " when the job was planned; the output is not written ",
                                        "(finished segments are kept: run again once the input reads as before)"));
}

// Whether the output container keeps each packet as one (Matroska, the MOV family): there the
// read-back compares counts; elsewhere (MPEG-TS regroups audio frames into PES packets) only
// that every stream is there.
bool keeps_packets_one_to_one(const media::Muxer& mux) {
  const std::string ext = mux.final_path().extension().string();
  return ext != ".ts" && ext != ".m2ts" && ext != ".mts";
}

}  // namespace

AssembleReport assemble_segments(const JobDir& dir, const JobSpec& spec, const SegmentPlan& plan,
                                 const std::map<int, SegmentRecord>& done, std::optional<FileIdentity> replaceable) {
  std::string missing;
  int64_t expected_frames = 0;
  for (const Segment& s : plan.segments) {
    auto it = done.find(s.index);
    if (it == done.end()) missing += (missing.empty() ? "" : ", ") + std::to_string(s.index);
    else expected_frames += it->second.frames_out;
  }
  if (!missing.empty())
    throw Error(ErrorKind::Usage, str(dir.root().string(), ": segments not finished yet: ", missing));
  check_input_unchanged(spec);

  // The stream's parameters come from the first segment that holds frames: one whose frames a
  // stage dropped (a select filter) holds a stream without packets, which does not open.
  int first_index = -1;
  for (const Segment& s : plan.segments)
    if (first_index < 0 && !done.at(s.index).packets.empty()) first_index = s.index;
  if (first_index < 0)
    throw Error(ErrorKind::Usage, str(spec.input, ": the pipeline made no frames (a stage dropped every one, e.g. a select filter)"));
  media::Demuxer source(spec.input);
  media::Demuxer first(dir.segment_file(first_index).string());
  const AVStream* svid = source.video_stream();
  const AVRational rate = av_guess_frame_rate(first.format(), first.video_stream(), nullptr);

  // An assembly killed midway left its temporary file; this one starts over.
  remove_orphaned_partials(spec.output);
  media::Muxer mux(spec.output, spec.container);
  mux.set_replaceable(replaceable);
  std::map<int, int> copied;
  int video_out = -1;
  // What the output must hold, in its stream order: checked on the written file before it takes
  // the final name (jobs/output_check.h). Packet counts are filled in as they are written.
  std::vector<PromisedStream> promised;
  for (unsigned i = 0; i < source.format()->nb_streams; ++i) {
    const AVStream* st = source.format()->streams[i];
    if (int(i) == source.video_index()) {
      video_out = mux.add_encoded_video(first.video_stream(), svid, rate);
      promised.push_back({int(i), AVMEDIA_TYPE_VIDEO, first.video_stream()->codecpar->codec_id, 0, video_out});
    } else if (st->codecpar->codec_id != AV_CODEC_ID_NONE) {
      AVMediaType type = st->codecpar->codec_type;
      AVCodecID codec = st->codecpar->codec_id;
      int out = -1;
      // FRAMELIFT_FAIL_AT=lose-stream:N (util/crash_point.h): the test's stand-in for a stream
      // lost on the way, which only the read-back of the written file may catch.
      if (!failure_point("lose-stream")) {
        out = copied[int(i)] = mux.add_copy(st);
        if (!mux.keeps_packets(out)) type = AVMEDIA_TYPE_ATTACHMENT;  // cover art in Matroska
        codec = mux.codec(out);  // a converted subtitle's
      }
      promised.push_back({int(i), type, codec, 0, out});
    }
  }
  // HDR metadata that only the frames carry (HEVC SEI) went onto the stream in one pass; the
  // segment files cannot keep it, so it comes from the source's first frame again.
  if (media::FramePtr first_frame = first_video_frame(spec.input)) mux.add_hdr_side_data(video_out, first_frame.get());
  mux.warn_if_rotation_dropped(video_out);
  mux.copy_global_metadata(source.format());
  mux.write_header();

  // A sample job (--max-frames) keeps the other streams up to where its video ends.
  const int64_t video_end = spec.max_frames > 0 ? plan.frame_pts.back() : INT64_MAX;
  SegmentReader segments(dir, done, int(plan.segments.size()));
  media::PacketPtr vpkt = media::make_packet(), opkt = media::make_packet();
  bool have_video = segments.next(vpkt.get());
  std::map<int, int64_t> read_packets;  // every other stream's, to compare with the plan's count
  auto read_other = [&] {
    while (source.read(opkt.get())) {
      if (opkt->stream_index == source.video_index()) continue;
      ++read_packets[opkt->stream_index];
      if (copied.count(opkt->stream_index)) return true;
    }
    return false;
  };
  bool have_other = read_other();
  AssembleReport report;
  int64_t last_dts = AV_NOPTS_VALUE;
  auto when = [](const AVPacket* p) { return p->dts != AV_NOPTS_VALUE ? p->dts : p->pts; };
  while (have_video || have_other) {
    // A stop is honoured up to the rename below; from there the output is complete.
    throw_if_stop_requested();
    const AVRational otb = have_other ? source.format()->streams[opkt->stream_index]->time_base : AVRational{1, 1};
    const bool video_first =
        have_video && (!have_other || av_compare_ts(when(vpkt.get()), segments.time_base(), when(opkt.get()), otb) <= 0);
    if (video_first) {
      // Each segment's encoder starts its decode timestamps a few frames before its first
      // picture; with B-frames that can touch the previous segment's last one.
      if (last_dts != AV_NOPTS_VALUE && vpkt->dts != AV_NOPTS_VALUE && vpkt->dts <= last_dts) vpkt->dts = last_dts + 1;
      if (vpkt->dts != AV_NOPTS_VALUE) last_dts = vpkt->dts;
      mux.write(vpkt.get(), segments.time_base(), video_out);
      ++report.video_frames;
      crash_point("assemble");
      have_video = segments.next(vpkt.get());
    } else {
      const bool past_end = video_end != INT64_MAX && opkt->pts != AV_NOPTS_VALUE &&
                            av_compare_ts(opkt->pts, otb, video_end, plan.time_base) > 0;
      if (!past_end) {
        mux.write(opkt.get(), otb, copied[opkt->stream_index]);
        ++report.other_packets;
      }
      have_other = read_other();
    }
  }
  if (report.video_frames != expected_frames)
    throw Error(ErrorKind::Output, str(spec.output, ": assembled ", report.video_frames, " frames, the journal records ",
                                       expected_frames, "; not written"));
  if (source.ended_early())
    throw Error(ErrorKind::Input, str(spec.input, ": cannot be read to its end to copy its other streams; the output is not written"));
  check_packets_as_planned(spec, plan, read_packets);
  throw_if_stop_requested();
  mux.close();
  for (PromisedStream& p : promised)
    if (p.output_index >= 0) p.packets = mux.packets_written(p.output_index);
  check_output_streams(mux.temp_path(), spec.output, promised, keeps_packets_one_to_one(mux));
  record_assembly(dir, mux.temp_path());
  try {
    mux.commit();
  } catch (...) {
    // Not the output after all (removed, or kept under another name): nothing may take it for one.
    std::error_code ec;
    std::filesystem::remove(dir.assembled_file(), ec);
    throw;
  }
  crash_point("assembled");
  report.segments = int(plan.segments.size());
  report.output = spec.output;
  return report;
}

int64_t count_video_packets(const std::filesystem::path& file) {
  media::Demuxer demux(file.string(), media::OnStop::Finish);
  media::PacketPtr pkt = media::make_packet();
  int64_t n = 0;
  while (demux.read(pkt.get()))
    if (pkt->stream_index == demux.video_index()) ++n;
  if (demux.ended_early()) throw Error(ErrorKind::Input, str(file.string(), ": cannot be read to the end"));
  return n;
}

}  // namespace framelift::jobs
