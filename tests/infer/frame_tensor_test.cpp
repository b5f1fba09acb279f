// Color order, value range and bit depth of the frame <-> tensor conversion, checked with known
// color patches: the same color must come out that went in.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

extern "C" {
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
}

#include "infer/frame_tensor.h"
#include "media/av_error.h"

namespace framelift::infer {
namespace {

media::VideoFormat format(AVPixelFormat pix, int w, int h) {
  media::VideoFormat f;
  f.width = w;
  f.height = h;
  f.pix_fmt = pix;
  f.matrix = AVCOL_SPC_BT709;
  f.range = AVCOL_RANGE_MPEG;
  return f;
}

TEST(FrameTensor, PureColorsKeepTheirChannelOrderAndRange) {
  // Red, green, blue, white, black, 18% grey.
  const float patches[][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}, {0, 0, 0}, {0.18f, 0.18f, 0.18f}};
  for (AVPixelFormat pix : {AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV444P12LE, AV_PIX_FMT_RGB24}) {
    for (const auto& c : patches) {
      at::Tensor in = at::empty({3, 32, 48});
      for (int ch = 0; ch < 3; ++ch) in[ch].fill_(c[ch]);
      TensorToFrame to_frame(format(pix, 48, 32));
      media::FramePtr frame = to_frame.convert(in);
      FrameToTensor to_tensor;
      at::Tensor out = to_tensor.convert(frame.get());
      ASSERT_EQ(out.sizes(), in.sizes());
      const double tolerance = pix == AV_PIX_FMT_YUV420P || pix == AV_PIX_FMT_RGB24 ? 1.5 / 255 : 1.5 / 1023;
      for (int ch = 0; ch < 3; ++ch)
        EXPECT_NEAR(out[ch].mean().item<double>(), c[ch], tolerance)
            << av_get_pix_fmt_name(pix) << " channel " << ch << " of color " << c[0] << "," << c[1] << "," << c[2];
    }
  }
}

TEST(FrameTensor, TenBitGradientKeepsMoreThan256Levels) {
  // A 10-bit luma ramp: an 8-bit step anywhere in the path would leave at most 256 levels.
  media::FramePtr f = media::make_frame();
  f->width = 1024;
  f->height = 2;
  f->format = AV_PIX_FMT_YUV444P10LE;
  f->colorspace = AVCOL_SPC_BT709;
  f->color_range = AVCOL_RANGE_JPEG;
  media::check(av_frame_get_buffer(f.get(), 0), ErrorKind::Resource, "frame");
  for (int y = 0; y < 2; ++y) {
    auto* luma = reinterpret_cast<uint16_t*>(f->data[0] + y * f->linesize[0]);
    auto* cb = reinterpret_cast<uint16_t*>(f->data[1] + y * f->linesize[1]);
    auto* cr = reinterpret_cast<uint16_t*>(f->data[2] + y * f->linesize[2]);
    for (int x = 0; x < 1024; ++x) {
      luma[x] = uint16_t(x);
      cb[x] = cr[x] = 512;
    }
  }
  FrameToTensor to_tensor;
  at::Tensor t = to_tensor.convert(f.get());
  at::Tensor levels = std::get<0>(at::_unique((t[1][0] * 1023).round()));
  EXPECT_GT(levels.numel(), 1000);
  EXPECT_NEAR(t[1][0][1023].item<float>(), 1.0f, 1e-3);
  EXPECT_NEAR(t[1][0][0].item<float>(), 0.0f, 1e-3);
}

}  // namespace
}  // namespace framelift::infer
