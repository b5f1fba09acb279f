#include "framelift/source.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <deque>

extern "C" {
#include <libavutil/mathematics.h>
}

#include "api/moved_from.h"
#include "api/video_shape.h"
#include "infer/frame_tensor.h"
#include "media/decoder.h"
#include "media/demuxer.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift {

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
  VideoShape shape;

  Impl(const std::string& in, const SourceOptions& o)
      : input(in),
        options(o),
        demux(in),
        decoder(demux.video_stream(),
                media::DecoderOptions{o.hwaccel, o.fail_on_corrupt_frames ? media::DecodeErrorPolicy::Fail
                                                                          : media::DecodeErrorPolicy::Skip},
                in) {
    if (!(o.start_s >= 0) || !std::isfinite(o.start_s))
      throw Error(ErrorKind::Usage, str("Source: start_s ", o.start_s, " is not a time >= 0"));
    if (o.max_frames < 0) throw Error(ErrorKind::Usage, str("Source: max_frames ", o.max_frames, " is negative"));
    AVStream* vst = demux.video_stream();
    if (o.start_s > 0) {
      const int64_t start = vst->start_time == AV_NOPTS_VALUE ? 0 : vst->start_time;
      from_pts = start + av_rescale_q(std::llround(o.start_s * 1e6), {1, 1000000}, vst->time_base);
      demux.seek_video(from_pts);
    }
    const media::FramePtr* first = peek();
    if (!first)
      throw Error(ErrorKind::Input, str(in, o.start_s > 0 ? str(": no video frames at or after ", o.start_s, " s")
                                                          : std::string(": the video stream has no frames")));
    const AVRational rate = av_guess_frame_rate(demux.format(), vst, nullptr);
    media::VideoFormat f = media::VideoFormat::of_frame(first->get(), vst->time_base, rate);
    if (f.field_order == AV_FIELD_UNKNOWN) f.field_order = vst->codecpar->field_order;
    f.start_pts = (*first)->pts == AV_NOPTS_VALUE ? 0 : (*first)->pts;
    shape = api::shape_of(f);
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
  media::FramePtr f = std::move(s.pending.front());
  s.pending.pop_front();
  const at::Tensor rgb = s.to_tensor.convert(f.get()).to(at::kFloat).contiguous();
  Frame out{int(rgb.size(2)), int(rgb.size(1)), f->pts == AV_NOPTS_VALUE ? 0 : f->pts,
            std::vector<float>(size_t(rgb.numel()))};
  std::memcpy(out.rgb.data(), rgb.data_ptr<float>(), out.rgb.size() * sizeof(float));
  ++s.produced;
  return out;
}

}  // namespace framelift
