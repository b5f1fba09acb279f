// run_pipeline: one run as its three parts (docs/architecture.md walks it): a FrameReader reads
// the window of the input this run is for, the process thread takes the frames through the
// StageChain, and a FrameWriter encodes and muxes; the three threads meet at two bounded queues.
#include "run/runner.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

#include <chrono>
#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "run/bounded_queue.h"
#include "run/frame_processor.h"
#include "run/frame_reader.h"
#include "run/frame_writer.h"
#include "run/input_window.h"
#include "run/stage_chain.h"
#include "pipeline/process_settings.h"
#include "pipeline/stage_registry.h"
#include "run/warm_stages.h"
#include "util/error.h"
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

int64_t expected_frames(const AVStream* st) {
  if (st->nb_frames > 0) return st->nb_frames;
  AVRational rate = st->avg_frame_rate.num ? st->avg_frame_rate : st->r_frame_rate;
  if (st->duration > 0 && rate.num > 0) return int64_t(st->duration * av_q2d(st->time_base) * av_q2d(rate) + 0.5);
  return 0;
}

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

// The one place a run's kind becomes its window: a segment, a sample, or the whole input.
InputWindow input_window(const RunOptions& o, int context) {
  if (o.window) return segment_input(*o.window->plan, o.window->index, context, o.window->seek, o.max_frames);
  if (!o.sample.empty()) return sample_input(o.sample, o.max_frames);
  return whole_input(o.max_frames);
}

WriterOptions writer_options(const RunOptions& o) {
  WriterOptions w;
  w.output = o.output;
  w.container = o.container;
  w.encoder = o.encoder;
  w.segment = o.window.has_value();
  w.global_header = o.window ? o.window->global_header : true;
  return w;
}

// The stages' output format, tagged for the conversion back from RGB.
media::VideoFormat stage_output_format(StageChain::Stages& stages, const media::VideoFormat& in, int64_t max_frame_pixels) {
  media::VideoFormat out = StageChain::configure(stages, in, max_frame_pixels);
  if (!stages.empty()) {
    // Frames pass through RGB; tag the output with the matrix used to convert back.
    out.matrix = media::effective_matrix(in);
    if (out.range == AVCOL_RANGE_UNSPECIFIED) out.range = AVCOL_RANGE_MPEG;
  }
  return out;
}

ProgressCounters& counters_for(const RunOptions& o, const RunContext& c, const AVStream* video, ProgressCounters& own) {
  if (c.shared_progress) return *c.shared_progress;
  own.total_out = expected_frames(video);
  if (o.max_frames > 0 && (own.total_out == 0 || own.total_out > o.max_frames)) own.total_out = o.max_frames;
  return own;
}

// The three threads of a run, joined by two bounded queues: decode, process, encode (this one).
// The first failure aborts both queues, so every thread returns, and is rethrown after the joins.
void run_threads(const RunOptions& o, Profiler* profiler, FrameReader& reader, StageChain::Stages& stages, const ProcessPlan& plan,
                 FrameWriter& writer, ProgressCounters& counters) {
  BoundedQueue<media::FramePtr> decoded(o.queue_depth), to_encode(o.queue_depth);
  FailureLatch latch;
  // The caller's cancel (a library run's) reaches this run's threads and no other run's.
  const CancelFlag* cancel = current_cancel_flag();
  auto guarded = [&](auto body) {
    return [&, body] {
      CancelScope cancelling(cancel);
      ProfileScope profiling(profiler);
      try {
        body();
      } catch (...) {
        latch.fail(std::current_exception(), decoded, to_encode);
      }
    };
  };
  auto copy = [&](AVPacket* p, AVRational tb) { writer.copy_packet(p, tb); };
  std::thread decode_thread(guarded([&] { reader.run(decoded, copy, counters); }));
  std::thread process_thread(guarded([&] { process_frames(stages, plan, decoded, to_encode); }));
  guarded([&] {
    writer.run(to_encode, counters);
    if (!latch.failed()) writer.drain();
  })();
  decode_thread.join();
  process_thread.join();
  latch.rethrow();
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

RunReport run_pipeline(const RunOptions& o, const RunContext& c) {
  const auto start = std::chrono::steady_clock::now();
  check_output_path(o);
  FrameReader reader(o.input, o.decoder);
  apply(process_settings(o.pipeline, o.stage_defaults));  // before any stage is built
  std::vector<std::unique_ptr<Stage>> own_stages;
  StageChain::Stages& stages =
      c.warm_stages ? c.warm_stages->get(o.pipeline, o.stage_defaults) : (own_stages = make_stages(o.pipeline, o.stage_defaults));
  int context = 0;
  for (const auto& stage : stages) context += stage->context_frames();
  reader.start(input_window(o, context));
  const InputWindow& window = reader.window();

  const media::VideoFormat in_format = reader.format();
  FrameWriter writer(writer_options(o), stage_output_format(stages, in_format, o.max_frame_pixels), reader);
  warn_if_alpha_is_dropped(o.input, in_format.pix_fmt, writer.format().pix_fmt, !stages.empty());

  ProgressCounters own_counters;
  ProgressCounters& counters = counters_for(o, c, reader.video_stream(), own_counters);
  ProgressReporter progress(c.shared_progress ? ProgressMode::None : o.progress, counters);
  const ProcessPlan plan{reader.video_stream()->time_base, writer.format(), o.color_conversion, window.keep_from, window.keep_to};
  ProfileScope profiling(c.profiler);  // this thread's sections after the run too
  run_threads(o, c.profiler, reader, stages, plan, writer, counters);

  if (!reader.limited() && !window.video_only) media::check_video_complete(reader.demuxer(), reader.last_pts());
  // A whole video out of which the stages made nothing is no result (a segment may be empty:
  // its part of a select filter's cut; the job checks the whole).
  if (!window.exact && reader.frames_in() > 0 && writer.frames_out() == 0)
    throw Error(ErrorKind::Usage, str(o.input, ": the pipeline made no frames (a stage dropped every one, e.g. a select filter)"));
  writer.finish();
  progress.finish();

  RunReport report;
  report.encoder_time_base = writer.encoder_time_base();
  report.packet_times = writer.take_packet_times();
  report.frames_in = reader.frames_in();
  report.frames_out = writer.frames_out();
  report.decode_errors = reader.decode_errors();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.output = o.output;
  return report;
}

}  // namespace framelift::pipeline
