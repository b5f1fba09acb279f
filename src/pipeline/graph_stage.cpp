#include "pipeline/graph_stage.h"

#include <ATen/ATen.h>

#include <cstring>

#include "media/av_error.h"
#include "util/error.h"
#include "util/log.h"
#include "util/str.h"

namespace framelift::pipeline {
namespace {

// GBRPF32 stores planes G, B, R; the pipeline's tensor is R, G, B.
constexpr int kPlaneOfChannel[3] = {2, 0, 1};

media::FramePtr to_gbrpf32(const at::Tensor& image, int64_t pts) {
  at::Tensor rgb = image.to(at::kCPU, at::kFloat).contiguous();
  const int h = int(rgb.size(1)), w = int(rgb.size(2));
  media::FramePtr f = media::make_frame();
  f->format = AV_PIX_FMT_GBRPF32;
  f->width = w;
  f->height = h;
  media::check(av_frame_get_buffer(f.get(), 0), ErrorKind::Resource, "allocating a frame for a filter graph");
  const float* src = rgb.data_ptr<float>();
  for (int c = 0; c < 3; ++c) {
    const int p = kPlaneOfChannel[c];
    for (int y = 0; y < h; ++y)
      std::memcpy(f->data[p] + size_t(y) * f->linesize[p], src + (size_t(c) * h + y) * w, size_t(w) * sizeof(float));
  }
  f->pts = pts;
  f->color_range = AVCOL_RANGE_JPEG;
  f->colorspace = AVCOL_SPC_RGB;
  return f;
}

at::Tensor from_gbrpf32(const AVFrame* f) {
  if (f->format != AV_PIX_FMT_GBRPF32) throw Error(ErrorKind::Internal, "filter graph returned a non-float frame");
  const int h = f->height, w = f->width;
  at::Tensor rgb = at::empty({3, h, w}, at::kFloat);
  float* dst = rgb.data_ptr<float>();
  for (int c = 0; c < 3; ++c) {
    const int p = kPlaneOfChannel[c];
    for (int y = 0; y < h; ++y)
      std::memcpy(dst + (size_t(c) * h + y) * w, f->data[p] + size_t(y) * f->linesize[p], size_t(w) * sizeof(float));
  }
  return rgb;
}

}  // namespace

media::VideoFormat GraphStage::configure(const media::VideoFormat& in) {
  const std::string description = graph_description(in);
  if (description.empty()) return in;
  media::VideoFormat float_in = in;
  float_in.pix_fmt = AV_PIX_FMT_GBRPF32;
  graph_.emplace(float_in, description, str("stage ", name()), std::vector<AVPixelFormat>{AV_PIX_FMT_GBRPF32});
  media::VideoFormat out = graph_->output_format(float_in);
  // Any pixel format out: FrameToTensor takes what the graph gives (the decoded one, normally).
  // A decoded format libavfilter cannot take leaves the RGB path, which takes every format.
  if (wants_decoded_frames()) {
    try {
      decoded_graph_.emplace(in, description, str("stage ", name()));
    } catch (const Error& e) {
      decoded_graph_.reset();
      log::debug(e.what(), "; filtering the RGB frames instead");
    }
  }
  out.pix_fmt = in.pix_fmt;  // the source's format still decides the encoder's default
  return adjust_output(out);
}

void GraphStage::push(Frame frame, const Emit& emit) {
  if (!graph_) return emit(std::move(frame));
  graph_->push(to_gbrpf32(frame.image, frame.pts));
  graph_->pull([&](media::FramePtr f) { emit_frame(std::move(f), emit); });
}

void GraphStage::flush(const Emit& emit) {
  if (!graph_) return;
  graph_->flush([&](media::FramePtr f) { emit_frame(std::move(f), emit); });
}

void GraphStage::emit_frame(media::FramePtr f, const Emit& emit) {
  // The runner orders and segments frames by time: a graph that loses it cannot be used.
  if (f->pts == AV_NOPTS_VALUE) throw Error(ErrorKind::Usage, str("stage ", name(), ": the filter graph dropped the timestamps"));
  emit(Frame{from_gbrpf32(f.get()), f->pts});
}

}  // namespace framelift::pipeline
