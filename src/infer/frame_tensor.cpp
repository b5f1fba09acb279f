#include "infer/frame_tensor.h"

#include <ATen/ATen.h>

extern "C" {
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include "media/av_error.h"
#include "media/color_sws.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::infer {
namespace {

constexpr int kSwsFlags = SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP;

// GBRPF32 stores planes G, B, R; a [3, H, W] RGB tensor stores R, G, B.
void planes_of(const at::Tensor& rgb, uint8_t* planes[4], int linesize[4]) {
  const int64_t h = rgb.size(1), w = rgb.size(2);
  auto* base = reinterpret_cast<uint8_t*>(rgb.data_ptr<float>());
  const int64_t plane_bytes = h * w * int64_t(sizeof(float));
  planes[0] = base + plane_bytes;      // G
  planes[1] = base + 2 * plane_bytes;  // B
  planes[2] = base;                    // R
  planes[3] = nullptr;
  for (int i = 0; i < 3; ++i) linesize[i] = int(w * sizeof(float));
  linesize[3] = 0;
}

}  // namespace

at::Tensor FrameToTensor::convert(const AVFrame* f) {
  auto fmt = AVPixelFormat(f->format);
  if (!sws_ || f->width != width_ || f->height != height_ || f->format != format_ ||
      f->colorspace != matrix_ || f->color_range != range_) {
    media::VideoFormat vf = media::VideoFormat::of_frame(f, {1, 1}, {0, 1});
    sws_ = media::make_color_sws(f->width, f->height, fmt, AV_PIX_FMT_GBRPF32, media::effective_matrix(vf),
                                 media::is_full_range(fmt, f->color_range), true, kSwsFlags, ErrorKind::Input);
    width_ = f->width;
    height_ = f->height;
    format_ = f->format;
    matrix_ = f->colorspace;
    range_ = f->color_range;
  }
  at::Tensor out = at::empty({3, f->height, f->width}, at::kFloat);
  uint8_t* planes[4];
  int linesize[4];
  planes_of(out, planes, linesize);
  sws_scale(sws_.get(), f->data, f->linesize, 0, f->height, planes, linesize);
  return out;
}

TensorToFrame::TensorToFrame(const media::VideoFormat& format) : format_(format) {
  sws_ = media::make_color_sws(format.width, format.height, AV_PIX_FMT_GBRPF32, format.pix_fmt,
                               media::effective_matrix(format), true,
                               media::is_full_range(format.pix_fmt, format.range), kSwsFlags, ErrorKind::Input);
}

media::FramePtr blank_output_frame(const media::VideoFormat& format) {
  media::FramePtr frame = media::make_frame();
  frame->width = format.width;
  frame->height = format.height;
  frame->format = format.pix_fmt;
  frame->colorspace = media::effective_matrix(format);
  frame->color_range = format.range;
  frame->color_primaries = format.primaries;
  frame->color_trc = format.transfer;
  frame->chroma_location = format.chroma_location;
  frame->sample_aspect_ratio = format.sample_aspect;
  media::check(av_frame_get_buffer(frame.get(), 0), ErrorKind::Resource, "allocating an output frame");
  return frame;
}

void check_output_shape(const at::Tensor& image, const media::VideoFormat& format) {
  if (image.dim() != 3 || image.size(0) != 3 || image.size(1) != format.height || image.size(2) != format.width)
    throw Error(ErrorKind::Internal, framelift::str("a stage produced a frame of shape ", image.sizes(), ", expected [3, ",
                                                    format.height, ", ", format.width, "]"));
}

media::FramePtr TensorToFrame::convert(const at::Tensor& image) {
  check_output_shape(image, format_);
  at::Tensor rgb = image.to(at::kCPU, at::kFloat).clamp(0.0, 1.0).contiguous();
  media::FramePtr frame = blank_output_frame(format_);
  uint8_t* planes[4];
  int linesize[4];
  planes_of(rgb, planes, linesize);
  sws_scale(sws_.get(), planes, linesize, 0, format_.height, frame->data, frame->linesize);
  return frame;
}

}  // namespace framelift::infer
