#pragma once
// YUV <-> RGB as tensor operations, so that colour conversion runs where the model runs.
//
// On a GPU this is what keeps the host out of the way: the upload carries the decoder's own planes
// (1.5 bytes per pixel for 8-bit 4:2:0) instead of float RGB (12 bytes), the download carries the
// encoder's planes, and the CPU cores are left to decoding and encoding rather than swscale's
// float conversions. On the CPU swscale (infer/frame_tensor.h) stays the default: it is faster
// there and it is the reference these converters are tested against.
//
// Same conventions as frame_tensor.h: [3, H, W] float32 RGB in [0, 1]; the stream's matrix
// (media::effective_matrix when unspecified) and range. Chroma is resampled bilinearly with centred
// siting (4:2:0 averaged over 2x2 on the way out); swscale interpolates bicubically, so the two
// agree to within about a code value on real footage, not bit for bit (docs/frame-layout.md).
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "media/av_ptr.h"
#include "media/video_format.h"

namespace framelift::infer {

// Whether tensor ops can convert frames of this format and matrix: YUV with 8 to 16 bits per
// sample, little-endian, planar or semi-planar (NV12, P010) or packed (YUYV), and a matrix with
// constant luminance coefficients (BT.601, BT.709, BT.2020 non-constant, SMPTE 240M, FCC).
bool tensor_convertible(AVPixelFormat format, AVColorSpace matrix);
// The same for a decoded frame, with its effective matrix (media::effective_matrix).
bool tensor_convertible(const AVFrame* frame);

class YuvToTensor {
 public:
  explicit YuvToTensor(c10::Device device) : device_(device) {}
  // The frame's planes go to the device as they are (pinned, asynchronous on CUDA) and are
  // converted there. Throws Error(Internal) for a format tensor_convertible() refuses.
  at::Tensor convert(const AVFrame* frame);

 private:
  c10::Device device_;
};

class TensorToYuv {
 public:
  // `format` is the frame the encoder wants; tensor_convertible(format.pix_fmt, effective matrix)
  // must hold.
  explicit TensorToYuv(const media::VideoFormat& format);
  // image: [3, H, W] float on any device (values outside [0, 1] are clamped). Converts on the
  // image's device and downloads only the finished planes. The caller sets pts.
  media::FramePtr convert(const at::Tensor& image);

 private:
  media::VideoFormat format_;
};

}  // namespace framelift::infer
