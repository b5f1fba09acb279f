#include "pipeline/runner.h"

#include <ATen/ATen.h>

extern "C" {
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/pixdesc.h>
}

#include <chrono>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "infer/frame_tensor.h"
#include "infer/yuv_tensor.h"
#include "media/av_error.h"
#include "media/demuxer.h"
#include "media/filter_graph.h"
#include "media/frame_converter.h"
#include "media/hdr_encoder_params.h"
#include "media/hdr_side_data.h"
#include "media/muxer.h"
#include "pipeline/bounded_queue.h"
#include "pipeline/pipeline_policy.h"
#include "pipeline/stage_registry.h"
#include "pipeline/warm_stages.h"
#include "util/crash_point.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/profiler.h"
#include "util/stop.h"
#include "util/str.h"

namespace fs = std::filesystem;

namespace framelift::pipeline {

void check_output_path(const RunOptions& o) {
  if (o.output.empty()) throw Error(ErrorKind::Usage, "no output file given (-o)");
  if (same_file(o.input, o.output))
    throw Error(ErrorKind::Usage, str(o.output.string(), ": the output would overwrite the input"));
  std::error_code ec;
  if (fs::exists(o.output, ec) && !o.overwrite)
    throw Error(ErrorKind::Output, str(o.output.string(), ": already exists (use -y to overwrite)"));
  fs::path dir = o.output.parent_path().empty() ? fs::path(".") : o.output.parent_path();
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::Output, str(o.output.string(), ": folder ", dir.string(), " does not exist"));
}

namespace {

void copy_hdr_frame_side_data(const AVFrame* from, AVFrame* to) {
  for (auto [frame_type, packet_type] : media::kHdrSideData) {
    const AVFrameSideData* sd = av_frame_get_side_data(from, frame_type);
    if (sd && !av_frame_get_side_data(to, frame_type)) {
      AVFrameSideData* dst = av_frame_new_side_data(to, frame_type, sd->size);
      if (dst) memcpy(dst->data, sd->data, sd->size);
    }
  }
}

int64_t expected_frames(const AVStream* st) {
  if (st->nb_frames > 0) return st->nb_frames;
  AVRational rate = st->avg_frame_rate.num ? st->avg_frame_rate : st->r_frame_rate;
  if (st->duration > 0 && rate.num > 0) return int64_t(st->duration * av_q2d(st->time_base) * av_q2d(rate) + 0.5);
  return 0;
}

// Keeps timestamps strictly increasing: encoders and muxers refuse anything else, and broken
// inputs do repeat or omit timestamps.
class TimestampGuard {
 public:
  explicit TimestampGuard(AVRational time_base, AVRational rate) {
    step_ = rate.num > 0 ? std::max<int64_t>(1, av_rescale_q(1, av_inv_q(rate), time_base)) : 1;
  }
  int64_t fix(int64_t pts) {
    if (pts == AV_NOPTS_VALUE) pts = last_ == AV_NOPTS_VALUE ? 0 : last_ + step_;
    if (last_ != AV_NOPTS_VALUE && pts <= last_) pts = last_ + 1;
    return last_ = pts;
  }
  int64_t last() const { return last_; }

 private:
  int64_t step_;
  int64_t last_ = AV_NOPTS_VALUE;
};

// First failure wins; it stops every thread.
class FailureLatch {
 public:
  template <class... Queues>
  void fail(std::exception_ptr e, Queues&... queues) {
    {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = e;
    }
    (queues.abort(), ...);
  }
  bool failed() {
    std::lock_guard lock(mutex_);
    return bool(error_);
  }
  void rethrow() {
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
};

// The input timestamps a segment run works with (all of them INT64_MIN/MAX for a whole run).
struct WindowBounds {
  int64_t seek = AV_NOPTS_VALUE;  // keyframe to start decoding at
  int64_t feed_from = INT64_MIN, feed_to = INT64_MAX;  // frames fed to the stages (inclusive)
  int64_t keep_from = INT64_MIN, keep_to = INT64_MAX;  // output times that belong to the segment
  bool whole() const { return feed_from == INT64_MIN && feed_to == INT64_MAX; }
};

WindowBounds window_bounds(const SegmentWindow& w, int context) {
  const jobs::SegmentPlan& plan = *w.plan;
  WindowBounds b;
  // One segment (or an input whose timestamps cannot place frames): everything, no seeking.
  if (plan.segments.size() <= 1) return b;
  const jobs::Segment& seg = plan.segments.at(size_t(w.index));
  const int64_t n = plan.total_frames();
  b.feed_from = plan.frame_pts[size_t(std::max<int64_t>(0, seg.first_frame - context))];
  b.feed_to = plan.frame_pts[size_t(std::min<int64_t>(n - 1, seg.first_frame + seg.frames - 1 + context))];
  b.keep_from = w.index == 0 ? INT64_MIN : plan.start_pts(size_t(w.index));
  b.keep_to = plan.start_pts(size_t(w.index) + 1);
  if (w.seek && w.index > 0) b.seek = plan.keyframe_at_or_before(b.feed_from);
  return b;
}

// Stages work on RGB and most encoders have no alpha plane: a transparent input would come out
// opaque without a word. Say so once per input (a job runs one pass per segment).
void warn_if_alpha_is_dropped(const std::string& input, AVPixelFormat in, AVPixelFormat out, bool stages) {
  const AVPixFmtDescriptor* d_in = av_pix_fmt_desc_get(in);
  const AVPixFmtDescriptor* d_out = av_pix_fmt_desc_get(out);
  if (!d_in || !(d_in->flags & AV_PIX_FMT_FLAG_ALPHA)) return;
  static std::mutex mutex;
  static std::set<std::string> warned;
  {
    std::lock_guard lock(mutex);
    if (!warned.insert(input).second) return;
  }
  if (stages)
    log::warn(input, ": its alpha channel is dropped (", d_in->name, "): the stages work on RGB, the output is opaque");
  else if (!d_out || !(d_out->flags & AV_PIX_FMT_FLAG_ALPHA))
    log::warn(input, ": its alpha channel is dropped: the encoder's ", d_out ? d_out->name : "format", " has none");
}

}  // namespace


std::string RunReport::summary() const {
  char fps[32];
  std::snprintf(fps, sizeof fps, "%.2f", seconds > 0 ? frames_out / seconds : 0.0);
  std::string s = str("wrote ", output.string(), ": ", frames_out, " frames from ", frames_in, " in ", seconds,
                      " s (", fps, " frames/s)");
  if (decode_errors) s += str(", ", decode_errors, " corrupt frame(s) or packet(s) skipped");
  return s;
}

RunReport run_pipeline(const RunOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  check_output_path(o);
  media::Demuxer demux(o.input);
  AVStream* vst = demux.video_stream();
  const int vidx = demux.video_index();
  media::Decoder decoder(vst, o.decoder, o.input);
  std::vector<std::unique_ptr<Stage>> own_stages;
  std::vector<std::unique_ptr<Stage>>& stages =
      o.warm_stages ? o.warm_stages->get(o.pipeline, o.stage_defaults) : (own_stages = make_stages(o.pipeline, o.stage_defaults));
  const bool segment = o.window.has_value();
  int context = 0;
  for (const auto& stage : stages) context += stage->context_frames();
  const WindowBounds window = segment ? window_bounds(*o.window, context) : WindowBounds{};
  if (window.seek != AV_NOPTS_VALUE) demux.seek_video(window.seek);
  const bool sampled = !segment && !o.sample.empty();
  const bool video_only = segment || sampled;  // the other streams do not fit a part of the video
  if (sampled && o.sample.front().seek > 0) demux.seek_video(o.sample.front().seek);

  // Decode up to the first frame before anything is set up: the frame, not the container's
  // header, says what the video really is (pixel format, color, HDR side data).
  std::deque<media::FramePtr> primed;
  std::vector<media::PacketPtr> early_packets;
  media::PacketPtr pkt = media::make_packet();
  bool input_done = false;
  auto to_primed = [&](media::FramePtr f) { primed.push_back(std::move(f)); };
  while (primed.empty()) {
    if (!demux.read(pkt.get())) {
      decoder.decode(nullptr, to_primed);
      input_done = true;
      break;
    }
    if (pkt->stream_index == vidx) {
      decoder.decode(pkt.get(), to_primed);
    } else if (!video_only) {
      media::PacketPtr copy(av_packet_clone(pkt.get()));
      if (!copy) throw Error(ErrorKind::Resource, "out of memory buffering a packet");
      early_packets.push_back(std::move(copy));
    }
  }
  if (primed.empty())
    throw Error(ErrorKind::Input, str(o.input, demux.ended_early() ? ": truncated or unreadable before the first frame"
                                                                     : ": the video stream has no frames"));

  if (window.seek != AV_NOPTS_VALUE && primed.front()->pts != AV_NOPTS_VALUE && primed.front()->pts > window.feed_from)
    throw Error(ErrorKind::Input, str(o.input, ": seeking to segment ", o.window->index, " landed after its start"));
  const AVRational rate = av_guess_frame_rate(demux.format(), vst, nullptr);
  media::VideoFormat in_format = media::VideoFormat::of_frame(primed.front().get(), vst->time_base, rate);
  // Decoders that do not flag interlaced frames (FFV1, raw, MPEG-4): the container's field order.
  if (in_format.field_order == AV_FIELD_UNKNOWN) in_format.field_order = vst->codecpar->field_order;
  // Retiming stages lay their grid from the video's first frame, wherever this run starts.
  in_format.start_pts = segment && !o.window->plan->frame_pts.empty() && !window.whole()
                            ? o.window->plan->frame_pts.front()
                        : sampled ? o.sample.front().from
                                  : (primed.front()->pts == AV_NOPTS_VALUE ? 0 : primed.front()->pts);
  media::VideoFormat out_format = in_format;
  for (auto& stage : stages) {
    out_format = stage->configure(out_format);
    check_frame_pixels(stage->name(), out_format.width, out_format.height, o.max_frame_pixels);
  }
  if (!stages.empty()) {
    // Frames pass through RGB; tag the output with the matrix used to convert back.
    out_format.matrix = media::effective_matrix(in_format);
    if (out_format.range == AVCOL_RANGE_UNSPECIFIED) out_format.range = AVCOL_RANGE_MPEG;
  }

  media::Muxer mux(o.output, segment ? std::string() : o.container);
  mux.keep_result_if_commit_fails(!segment);  // a segment that cannot be committed is redone
  const bool global_header = segment ? o.window->global_header : mux.temp_path().extension() != ".ts";
  // HDR10 metadata into the bitstream too (media/hdr_encoder_params.h), not only the container.
  media::Encoder encoder(media::with_hdr_bitstream_params(o.encoder, primed.front().get()), out_format, global_header);
  out_format.pix_fmt = encoder.pix_fmt();
  warn_if_alpha_is_dropped(o.input, in_format.pix_fmt, out_format.pix_fmt, !stages.empty());

  std::map<int, int> copied;  // input stream index -> output stream index
  int video_out = -1;
  for (unsigned i = 0; i < demux.format()->nb_streams; ++i) {
    const AVStream* st = demux.format()->streams[i];
    if (int(i) == vidx) {
      video_out = mux.add_video(encoder.context(), vst);
    } else if (video_only) {
      continue;  // a segment holds the video; assembling adds the other streams from the source
    } else if (st->codecpar->codec_id == AV_CODEC_ID_NONE) {
      log::warn(o.input, ": stream #", i, " has an unknown codec and is not copied");
    } else {
      copied[int(i)] = mux.add_copy(st);
    }
  }
  mux.add_hdr_side_data(video_out, primed.front().get());
  mux.copy_global_metadata(demux.format());
  mux.write_header();
  for (auto& p : early_packets) {
    auto it = copied.find(p->stream_index);
    if (it != copied.end()) mux.write(p.get(), demux.format()->streams[p->stream_index]->time_base, it->second);
  }
  early_packets.clear();

  ProgressCounters own_counters;
  ProgressCounters& counters = o.shared_progress ? *o.shared_progress : own_counters;
  if (!o.shared_progress) {
    counters.total_out = expected_frames(vst);
    if (o.max_frames > 0 && (counters.total_out == 0 || counters.total_out > o.max_frames)) counters.total_out = o.max_frames;
  }
  ProgressReporter progress(o.shared_progress ? ProgressMode::None : o.progress, counters);
  int64_t frames_in = 0, frames_out = 0;  // this run's, for the report

  BoundedQueue<media::FramePtr> decoded(o.queue_depth), to_encode(o.queue_depth);
  FailureLatch latch;
  TimestampGuard timestamps(vst->time_base, rate);
  bool limited = false;  // stopped at max_frames
  // A sample run's place: the stretch being read, and the shift that joins it to the one before.
  size_t stretch = 0;
  int64_t shift = 0;
  bool reseek = false;  // the stretch is done; seek to the next one
  const int64_t frame_step = std::max<int64_t>(
      1, rate.num > 0 ? av_rescale_q(1, av_inv_q(rate), vst->time_base) : 1);

  // The caller's cancel (a library run's) reaches this run's threads and no other run's.
  const CancelFlag* cancel = current_cancel_flag();
  std::thread demux_thread([&] {
    CancelScope cancelling(cancel);
    ProfileScope profiling(o.profiler);
    try {
      bool stopped = false;
      auto sink = [&](media::FramePtr f) {
        if (stopped) return;
        count_work("decode.frames", 1);
        crash_point("decode");
        if (!window.whole() && f->pts != AV_NOPTS_VALUE) {
          if (f->pts < window.feed_from) return;  // decoded from the keyframe, before the segment
          if (f->pts > window.feed_to) {
            stopped = limited = true;  // the segment and its context are in
            return;
          }
        }
        if (sampled && f->pts != AV_NOPTS_VALUE) {
          if (f->pts < o.sample[stretch].from) return;  // decoded from the keyframe, before the stretch
          if (f->pts > o.sample[stretch].to) {
            stopped = true;
            if (++stretch == o.sample.size()) limited = true;
            else reseek = true;
            return;
          }
          if (stretch > 0 && shift == 0) shift = timestamps.last() + frame_step - f->pts;
          f->pts += shift;
        }
        if ((!segment || window.whole()) && o.max_frames > 0 && frames_in >= o.max_frames) {
          stopped = limited = true;  // a sample: stop reading, keep what was decoded
          return;
        }
        f->pts = timestamps.fix(f->pts);
        if (f->pts >= window.keep_from && f->pts < window.keep_to) {
          ++frames_in;
          ++counters.frames_in;
        }
        Section blocked("decode.blocked");  // the stages are behind
        stopped = !decoded.push(std::move(f));
      };
      while (!primed.empty() && !stopped) {
        sink(std::move(primed.front()));
        primed.pop_front();
      }
      if (!input_done) {
        Section decoding("decode");
        for (;;) {
          while (!stopped && demux.read(pkt.get())) {
            throw_if_stop_requested();
            if (pkt->stream_index == vidx) {
              decoder.decode(pkt.get(), sink);
            } else if (auto it = copied.find(pkt->stream_index); it != copied.end()) {
              mux.write(pkt.get(), demux.format()->streams[pkt->stream_index]->time_base, it->second);
            }
          }
          if (!reseek) break;
          reseek = stopped = false;
          shift = 0;
          demux.seek_video(o.sample[stretch].seek);
          decoder.reset();
        }
        if (!stopped || limited) decoder.decode(nullptr, sink);
      }
      decoded.close();
    } catch (...) {
      latch.fail(std::current_exception(), decoded, to_encode);
    }
  });

  std::thread process_thread([&] {
    CancelScope cancelling(cancel);
    ProfileScope profiling(o.profiler);
    try {
      // A first stage that filters the decoded frames (deinterlace, see Stage::decoded_frame_graph)
      // gets them before the conversion; the second stage gets its output.
      media::FilterGraph* frame_graph = stages.empty() ? nullptr : stages[0]->decoded_frame_graph();
      const size_t first_tensor_stage = frame_graph ? 1 : 0;
      const c10::Device input_device =
          first_tensor_stage < stages.size() ? stages[first_tensor_stage]->device() : c10::Device(c10::kCPU);
      // Whether frames on `device` convert with the tensor ops (when their format allows).
      auto tensor_ops_on = [&](const c10::Device& device) {
        return o.color_conversion == ColorConversion::Tensor ||
               (o.color_conversion == ColorConversion::Auto && device.is_cuda());
      };
      infer::FrameToTensor to_tensor;
      infer::YuvToTensor yuv_to_tensor(input_device);
      std::optional<infer::TensorToFrame> to_frame;
      std::optional<infer::TensorToYuv> tensor_to_yuv;
      if (!stages.empty()) to_frame.emplace(out_format);
      if (!stages.empty() && infer::tensor_convertible(out_format.pix_fmt, media::effective_matrix(out_format)))
        tensor_to_yuv.emplace(out_format);
      media::FrameConverter converter(out_format.pix_fmt);
      const AVFrame* current = nullptr;  // the decoded frame being processed, for its side data

      std::vector<Stage::Emit> emit(stages.size() + 1);
      // Output frames outside the segment come from its context frames: not this segment's.
      auto in_segment = [&](int64_t pts, AVRational tb) {
        return (window.keep_from == INT64_MIN || av_compare_ts(pts, tb, window.keep_from, vst->time_base) >= 0) &&
               (window.keep_to == INT64_MAX || av_compare_ts(pts, tb, window.keep_to, vst->time_base) < 0);
      };
      emit[stages.size()] = [&](Frame f) {
        if (!in_segment(f.pts, out_format.time_base)) return;
        media::FramePtr out;
        {
          Section converting("convert", false, 0);
          out = tensor_to_yuv && tensor_ops_on(f.image.device()) ? tensor_to_yuv->convert(f.image)
                                                                 : to_frame->convert(f.image);
        }
        out->pts = f.pts;
        if (current) copy_hdr_frame_side_data(current, out.get());
        Section blocked("process.blocked", false, 0);  // the encoder is behind
        to_encode.push(std::move(out));
      };
      for (size_t i = stages.size(); i-- > 0;)
        emit[i] = [&, i, on_cpu = stages[i]->device().is_cpu()](Frame f) {
          StageScope in_stage(int(i) + 1);
          // A frame in device memory goes back to the host only for a stage that computes there.
          if (on_cpu && !f.image.is_cpu()) {
            Section download("download");
            f.image = f.image.to(at::kCPU);
          }
          stages[i]->push(std::move(f), emit[i + 1]);
        };
      auto tensor_of = [&](const AVFrame* frame) {
        Section converting("convert", false, 0);
        return tensor_ops_on(input_device) && infer::tensor_convertible(frame) ? yuv_to_tensor.convert(frame)
                                                                               : to_tensor.convert(frame);
      };
      auto from_frame_graph = [&](media::FramePtr g) {
        current = g.get();
        emit[1](Frame{tensor_of(current), g->pts});
        current = nullptr;
      };

      auto next_decoded = [&] {
        Section idle("process.idle");  // waiting for decoded frames
        return decoded.pop();
      };
      while (auto f = next_decoded()) {
        throw_if_stop_requested();
        if (stages.empty()) {
          if (!in_segment((*f)->pts, vst->time_base)) continue;
          Section converting("convert", false, 0);
          media::FramePtr out = converter.convert(std::move(*f));
          out->pict_type = AV_PICTURE_TYPE_NONE;  // let the encoder choose its own frame types
          if (!to_encode.push(std::move(out))) return;
        } else if (frame_graph) {
          StageScope in_stage(1);
          frame_graph->push(std::move(*f));
          frame_graph->pull(from_frame_graph);
        } else {
          current = f->get();
          emit[0](Frame{tensor_of(current), (*f)->pts});
        }
      }
      if (latch.failed()) return;
      current = nullptr;
      if (frame_graph) {
        StageScope in_stage(1);
        frame_graph->flush(from_frame_graph);
      }
      for (size_t i = frame_graph ? 1 : 0; i < stages.size(); ++i) {
        StageScope in_stage(int(i) + 1);
        stages[i]->flush(emit[i + 1]);
      }
      to_encode.close();
    } catch (...) {
      latch.fail(std::current_exception(), decoded, to_encode);
    }
  });

  std::vector<std::array<int64_t, 3>> packet_times;
  auto write_packet = [&](AVPacket* p) {
    if (segment) packet_times.push_back({p->pts, p->dts, p->duration});
    mux.write(p, encoder.context()->time_base, video_out);
  };
  ProfileScope profiling(o.profiler);
  auto next_to_encode = [&] {
    Section idle("encode.idle");  // waiting for processed frames
    return to_encode.pop();
  };
  try {
    while (auto f = next_to_encode()) {
      throw_if_stop_requested();
      Section encoding("encode");
      encoder.encode(f->get(), write_packet);
      crash_point("encode");
      ++frames_out;
      ++counters.frames_out;
    }
    if (!latch.failed()) {
      Section encoding("encode");
      encoder.encode(nullptr, write_packet);
    }
  } catch (...) {
    latch.fail(std::current_exception(), decoded, to_encode);
  }
  demux_thread.join();
  process_thread.join();
  latch.rethrow();
  if (!limited && !video_only) media::check_video_complete(demux, timestamps.last());
  // A whole video out of which the stages made nothing is no result (a segment may be empty:
  // its part of a select filter's cut; the job checks the whole).
  if (!segment && frames_in > 0 && frames_out == 0)
    throw Error(ErrorKind::Usage, str(o.input, ": the pipeline made no frames (a stage dropped every one, e.g. a select filter)"));
  mux.finish();
  progress.finish();

  RunReport report;
  report.encoder_time_base = encoder.context()->time_base;
  report.packet_times = std::move(packet_times);
  report.frames_in = frames_in;
  report.frames_out = frames_out;
  report.decode_errors = decoder.error_count();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.output = o.output;
  return report;
}

}  // namespace framelift::pipeline
