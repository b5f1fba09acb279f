#include "framelift/sink.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <optional>

#include "api/moved_from.h"
#include "api/video_shape.h"
#include "infer/frame_tensor.h"
#include "media/encoder.h"
#include "media/muxer.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift {
namespace {

// What the encoder is offered: a typical video (4:2:0, limited range, the matrix players assume
// for its size: BT.601 below HD, BT.709 from it, as `run` does for untagged input), so that
// encoders that take it choose it and the others their closest format.
media::VideoFormat encoder_input(const VideoShape& shape) {
  media::VideoFormat f = api::format_of(shape, "Sink");
  f.pix_fmt = AV_PIX_FMT_YUV420P;
  f.range = AVCOL_RANGE_MPEG;
  f.matrix = AVCOL_SPC_UNSPECIFIED;
  f.matrix = media::effective_matrix(f);
  return f;
}

media::EncoderSettings settings_of(const SinkOptions& o) {
  media::EncoderSettings s;
  s.codec = o.codec;
  s.crf = o.crf;
  s.preset = o.preset;
  s.pix_fmt = o.pix_fmt;
  s.options = o.encoder_options;
  return s;
}

// The output's path, once it is known to be one the Sink may write.
std::filesystem::path checked_output(const std::string& output, bool overwrite) {
  std::error_code ec;
  if (output.empty()) throw Error(ErrorKind::Usage, "Sink: no output file given");
  if (std::filesystem::exists(output, ec) && !overwrite)
    throw Error(ErrorKind::Output, str(output, ": already exists (set SinkOptions::overwrite to replace it)"));
  return output;
}

}  // namespace

struct Sink::Impl {
  media::VideoFormat format;
  media::Muxer mux;
  media::Encoder encoder;
  std::optional<infer::TensorToFrame> to_frame;
  int video = -1;
  int64_t frames = 0;
  bool closed = false;

  Impl(const std::string& output, const VideoShape& shape, const SinkOptions& o)
      : format(encoder_input(shape)),
        mux(checked_output(output, o.overwrite), o.container),
        encoder(settings_of(o), format, mux.temp_path().extension() != ".ts") {
    format.pix_fmt = encoder.pix_fmt();
    to_frame.emplace(format);
    video = mux.add_video(encoder.context(), nullptr);
    mux.write_header();
  }

  void write_packet(AVPacket* p) { mux.write(p, encoder.context()->time_base, video); }
};

Sink::Sink(const std::string& output, const VideoShape& shape, const SinkOptions& options)
    : impl_(std::make_unique<Impl>(output, shape, options)) {}
Sink::~Sink() = default;
Sink::Sink(Sink&&) noexcept = default;
Sink& Sink::operator=(Sink&&) noexcept = default;

void Sink::write(const Frame& frame) {
  Impl& s = api::live(impl_, "Sink");
  if (s.closed) throw Error(ErrorKind::Usage, "Sink::write: the sink is closed");
  if (frame.width != s.format.width || frame.height != s.format.height ||
      frame.rgb.size() != size_t(3) * frame.width * frame.height)
    throw Error(ErrorKind::Input, str("Sink::write: a ", frame.width, "x", frame.height, " frame with ", frame.rgb.size(),
                                      " values; the sink was opened for ", s.format.width, "x", s.format.height));
  const at::Tensor image =
      at::from_blob(const_cast<float*>(frame.rgb.data()), {3, frame.height, frame.width}, at::kFloat);
  media::FramePtr out = s.to_frame->convert(image);
  out->pts = frame.pts;
  s.encoder.encode(out.get(), [&](AVPacket* p) { s.write_packet(p); });
  ++s.frames;
}

int64_t Sink::close() {
  Impl& s = api::live(impl_, "Sink");
  if (s.closed) return s.frames;
  s.encoder.encode(nullptr, [&](AVPacket* p) { s.write_packet(p); });
  s.mux.finish();
  s.closed = true;
  return s.frames;
}

}  // namespace framelift
