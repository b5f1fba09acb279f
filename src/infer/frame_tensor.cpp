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

// GBRP* stores planes G, B, R; a [3, H, W] RGB tensor stores R, G, B.
void planes_of(const at::Tensor& rgb, uint8_t* planes[4], int linesize[4]) {
  const int64_t h = rgb.size(1), w = rgb.size(2), elem = int64_t(rgb.element_size());
  auto* base = static_cast<uint8_t*>(rgb.data_ptr());
  const int64_t plane_bytes = h * w * elem;
  planes[0] = base + plane_bytes;      // G
  planes[1] = base + 2 * plane_bytes;  // B
  planes[2] = base;                    // R
  planes[3] = nullptr;
  for (int i = 0; i < 3; ++i) linesize[i] = int(w * elem);
  linesize[3] = 0;
}

}  // namespace

FloatRoute float_route(AVPixelFormat format) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(format);
  if (!d || (d->flags & AV_PIX_FMT_FLAG_FLOAT)) return {FloatRoute::Direct, AV_PIX_FMT_GBRPF32, 0};
  if (d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL)) {
    const int depth = d->comp[0].depth;
    // The planar RGB of the same depth (rounded up): swscale only repacks, losslessly.
    if (depth <= 8) return {FloatRoute::IntegerRgb, AV_PIX_FMT_GBRP, 255};
    if (depth <= 9) return {FloatRoute::IntegerRgb, AV_PIX_FMT_GBRP9, 511};
    if (depth <= 10) return {FloatRoute::IntegerRgb, AV_PIX_FMT_GBRP10, 1023};
    if (depth <= 12) return {FloatRoute::IntegerRgb, AV_PIX_FMT_GBRP12, 4095};
    if (depth <= 14) return {FloatRoute::IntegerRgb, AV_PIX_FMT_GBRP14, 16383};
    return {FloatRoute::IntegerRgb, AV_PIX_FMT_GBRP16, 65535};
  }
  return {FloatRoute::ScaledFloat, AV_PIX_FMT_GBRPF32, 0};
}

at::Tensor FrameToTensor::convert(const AVFrame* f) {
  auto fmt = AVPixelFormat(f->format);
  if (!sws_ || f->width != width_ || f->height != height_ || f->format != format_ ||
      f->colorspace != matrix_ || f->color_range != range_) {
    media::VideoFormat vf = media::VideoFormat::of_frame(f, {1, 1}, {0, 1});
    const AVColorSpace matrix = media::effective_matrix(vf);
    const bool full = media::is_full_range(fmt, f->color_range);
    route_ = float_route(fmt);
    sws_ = media::make_color_sws(f->width, f->height, fmt, route_.intermediate, matrix, full, true, kSwsFlags,
                                 ErrorKind::Input);
    white_ = route_.kind == FloatRoute::ScaledFloat ? media::swscale_float_white(fmt, matrix, full, kSwsFlags) : 1.0;
    width_ = f->width;
    height_ = f->height;
    format_ = f->format;
    matrix_ = f->colorspace;
    range_ = f->color_range;
  }
  const bool integer = route_.kind == FloatRoute::IntegerRgb;
  const auto dtype = !integer ? at::kFloat : route_.max_code <= 255 ? at::kByte : at::kShort;
  at::Tensor out = at::empty({3, f->height, f->width}, dtype);
  uint8_t* planes[4];
  int linesize[4];
  planes_of(out, planes, linesize);
  sws_scale(sws_.get(), f->data, f->linesize, 0, f->height, planes, linesize);
  if (integer) {
    // int16 holds unsigned 16-bit codes; k / (2^bits - 1) is the convention every model was trained on.
    if (dtype == at::kShort) out = out.to(at::kInt).bitwise_and_(0xFFFF);
    return out.to(at::kFloat).div_(double(route_.max_code));
  }
  if (white_ != 1.0) out.div_(white_);
  return out;
}

TensorToFrame::TensorToFrame(const media::VideoFormat& format) : format_(format) {
  const AVColorSpace matrix = media::effective_matrix(format);
  const bool full = media::is_full_range(format.pix_fmt, format.range);
  route_ = float_route(format.pix_fmt);
  sws_ = media::make_color_sws(format.width, format.height, route_.intermediate, format.pix_fmt, matrix, true, full,
                               kSwsFlags, ErrorKind::Input);
  if (route_.kind == FloatRoute::ScaledFloat) white_ = media::swscale_float_white(format.pix_fmt, matrix, full, kSwsFlags);
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
  at::Tensor rgb = image.to(at::kCPU, at::kFloat).clamp(0.0, 1.0);
  if (route_.kind == FloatRoute::IntegerRgb) {
    // Quantized here, round(v * (2^bits - 1)), and only repacked by swscale: its own float to
    // integer RGB rounds k/255 to k+1 for some codes (FFmpeg 5.1).
    at::Tensor codes = rgb.mul(double(route_.max_code)).round_();
    rgb = route_.max_code <= 255 ? codes.to(at::kByte) : codes.to(at::kInt).to(at::kShort);
  } else if (white_ != 1.0) {
    rgb = rgb.mul(white_);
  }
  rgb = rgb.contiguous();
  media::FramePtr frame = blank_output_frame(format_);
  uint8_t* planes[4];
  int linesize[4];
  planes_of(rgb, planes, linesize);
  sws_scale(sws_.get(), planes, linesize, 0, format_.height, frame->data, frame->linesize);
  return frame;
}

}  // namespace framelift::infer
