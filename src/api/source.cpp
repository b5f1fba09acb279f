#include "framelift/source.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <optional>

#include "framelift/values.h"

#include "api/moved_from.h"
#include "api/video_shape.h"
#include "infer/frame_tensor.h"
#include "media/decoder.h"
#include "media/demuxer.h"
#include "media/size_keeper.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift {
namespace {

// Options that are wrong whatever the file: refused before it is opened.
const SourceOptions& checked(const SourceOptions& o) {
  if (!std::isfinite(o.start_s) || o.start_s < 0)
    throw Error(ErrorKind::Usage, str("Source: start_s=", o.start_s, " is not a time (seconds, finite, >= 0)"));
  if (o.max_frames < 0) throw Error(ErrorKind::Usage, str("Source: max_frames=", o.max_frames, " is negative"));
  return o;
}

// Half of int64's range: the demuxer's seek still does arithmetic on the target.
constexpr long double kMaxTicks = 0x1p62L;

// The stream timestamp start_s after the stream's first one. Error(Usage) where that many ticks
// of its time base do not fit in a timestamp: the conversion would overflow and seek anywhere.
int64_t start_pts(const std::string& input, double start_s, const AVStream* vst) {
  const int64_t origin = vst->start_time == AV_NOPTS_VALUE ? 0 : vst->start_time;
  const long double ticks = static_cast<long double>(start_s) * vst->time_base.den / vst->time_base.num;
  if (ticks + origin > kMaxTicks)
    throw Error(ErrorKind::Usage, str("Source: start_s=", start_s, " is past what the timestamps of ", input,
                                      " can hold (time base ", vst->time_base.num, "/", vst->time_base.den, " s)"));
  return origin + std::llround(ticks);
}

}  // namespace

struct Source::Impl {
  std::string input;
  SourceOptions options;
  media::Demuxer demux;
  media::Decoder decoder;
  media::PacketPtr packet = media::make_packet();
  std::deque<media::FramePtr> pending;
  bool input_done = false;
  int64_t from_pts = AV_NOPTS_VALUE;  // frames before this (stream time base) are skipped
  int64_t produced = 0;
  infer::FrameToTensor to_tensor;
  std::optional<media::SizeKeeper> size_keeper;  // later frames at the first one's size
  VideoShape shape;

  Impl(const std::string& in, const SourceOptions& o)
      : input(in),
        options(checked(o)),
        demux(in),
        decoder(demux.video_stream(),
                media::DecoderOptions{name_of(o.hwaccel), o.fail_on_corrupt_frames ? media::DecodeErrorPolicy::Fail
                                                                          : media::DecodeErrorPolicy::Skip},
                in) {
    AVStream* vst = demux.video_stream();
    if (o.start_s > 0) {
      from_pts = start_pts(in, o.start_s, vst);
      demux.seek_video(from_pts);
    }
    const media::FramePtr* first = peek();
    if (!first)
      throw Error(ErrorKind::Input, str(in, o.start_s > 0 ? str(": no video frames at or after ", o.start_s, " s")
                                                          : std::string(": the video stream has no frames")));
    const AVRational rate = av_guess_frame_rate(demux.format(), vst, nullptr);
    media::VideoFormat f = media::VideoFormat::of_frame(first->get(), vst->time_base, rate);
    if (f.field_order == AV_FIELD_UNKNOWN) f.field_order = vst->codecpar->field_order;
    // The container's aspect where the decoder gives none (FFV1 in Matroska), as `run` reads it.
    f.sample_aspect = av_guess_sample_aspect_ratio(demux.format(), vst, const_cast<AVFrame*>(first->get()));
    f.start_pts = (*first)->pts == AV_NOPTS_VALUE ? 0 : (*first)->pts;
    shape = api::shape_of(f);
    size_keeper.emplace(f, in);
  }

  // The next frame to give (decoding as needed), past the ones before start_s; nullptr at the end.
  const media::FramePtr* peek() {
    auto keep = [&](media::FramePtr f) {
      if (from_pts != AV_NOPTS_VALUE && f->pts != AV_NOPTS_VALUE && f->pts < from_pts) return;
      pending.push_back(std::move(f));
    };
    while (pending.empty() && !input_done) {
      if (!demux.read(packet.get())) {
        decoder.decode(nullptr, keep);
        input_done = true;
      } else if (packet->stream_index == demux.video_index()) {
        decoder.decode(packet.get(), keep);
      }
    }
    return pending.empty() ? nullptr : &pending.front();
  }
};

Source::Source(const std::string& input, const SourceOptions& options) : impl_(std::make_unique<Impl>(input, options)) {}
Source::~Source() = default;
Source::Source(Source&&) noexcept = default;
Source& Source::operator=(Source&&) noexcept = default;

const VideoShape& Source::shape() const { return api::live(impl_, "Source").shape; }
int64_t Source::decode_errors() const { return api::live(impl_, "Source").decoder.error_count(); }

std::optional<Frame> Source::read() {
  Impl& s = api::live(impl_, "Source");
  if (s.options.max_frames > 0 && s.produced >= s.options.max_frames) return std::nullopt;
  if (!s.peek()) return std::nullopt;
  media::FramePtr f = s.size_keeper->keep(std::move(s.pending.front()));
  s.pending.pop_front();
  const at::Tensor rgb = s.to_tensor.convert(f.get()).to(at::kFloat).contiguous();
  Frame out{int(rgb.size(2)), int(rgb.size(1)), f->pts == AV_NOPTS_VALUE ? 0 : f->pts,
            std::vector<float>(size_t(rgb.numel()))};
  std::memcpy(out.rgb.data(), rgb.data_ptr<float>(), out.rgb.size() * sizeof(float));
  ++s.produced;
  return out;
}

}  // namespace framelift
