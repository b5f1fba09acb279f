#pragma once
// Conversion between decoded frames and the tensors stages work on.
//
// Frame layout in the pipeline (docs/frame-layout.md): a float32 tensor [3, H, W], planar RGB,
// values in [0, 1], full range, on the CPU, contiguous. An integer code k of a b-bit format is
// k / (2^b - 1), exactly, as models are trained (PyTorch scripts, chaiNNer and ncnn all feed
// k/255): integer RGB is repacked by swscale to planar RGB of its own depth and scaled here;
// YUV and gray go through swscale's float path, whose scale (about k/256 in FFmpeg 5.1) is
// measured and divided out (media::swscale_float_white), so no precision is lost to an 8-bit
// step. YUV<->RGB uses the stream's matrix and range (media::effective_matrix when unspecified).
//
// Both converters keep their swscale context between calls: no per-frame setup or allocation
// beyond the output itself. Not thread-safe; one per thread.
#include <ATen/core/Tensor.h>

#include "media/av_ptr.h"
#include "media/video_format.h"

namespace framelift::infer {

// How a pixel format reaches the pipeline's floats (and back): swscale's float output as it is
// (float formats), integer planar RGB of the format's depth scaled by max_code (integer RGB and
// palette formats), or swscale's float output divided by its measured white (YUV, gray).
struct FloatRoute {
  enum Kind { Direct, IntegerRgb, ScaledFloat } kind;
  AVPixelFormat intermediate;  // what swscale converts to (or from, on the way out)
  int max_code;                // 2^bits - 1 of the intermediate, for IntegerRgb
};
FloatRoute float_route(AVPixelFormat format);

class FrameToTensor {
 public:
  at::Tensor convert(const AVFrame* frame);

 private:
  media::SwsPtr sws_;
  FloatRoute route_{FloatRoute::Direct, AV_PIX_FMT_GBRPF32, 0};
  double white_ = 1.0;
  int width_ = 0, height_ = 0, format_ = -1;
  AVColorSpace matrix_ = AVCOL_SPC_UNSPECIFIED;
  AVColorRange range_ = AVCOL_RANGE_UNSPECIFIED;
};

class TensorToFrame {
 public:
  // `format` is the frame the encoder wants: size, pixel format, matrix and range.
  explicit TensorToFrame(const media::VideoFormat& format);
  // image: [3, H, W] float in [0, 1] (values outside are clamped). Returns a frame with the
  // format's properties; the caller sets pts.
  media::FramePtr convert(const at::Tensor& image);

 private:
  media::VideoFormat format_;
  media::SwsPtr sws_;
  FloatRoute route_{FloatRoute::Direct, AV_PIX_FMT_GBRPF32, 0};
  double white_ = 1.0;
};

// A frame with the format's size, pixel format and colour tags, buffers allocated (the matrix
// is the effective one, so players convert back as framelift did). The caller fills it.
media::FramePtr blank_output_frame(const media::VideoFormat& format);

// Throws Error(Internal) unless image is [3, format.height, format.width]: a stage's bug.
void check_output_shape(const at::Tensor& image, const media::VideoFormat& format);

}  // namespace framelift::infer
