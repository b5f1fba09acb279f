// The tensor colour converters (what runs on the GPU) against swscale (what runs on the CPU and has
// converted every frame framelift ever wrote) on real decoded frames: the two must agree to about
// a code value, in every format the GPU path takes.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "infer/frame_tensor.h"
#include "infer/yuv_tensor.h"
#include "media/decoder.h"
#include "media/demuxer.h"
#include "media/frame_converter.h"
#include "util/error.h"
#include "support/test_paths.h"

namespace framelift::infer {
namespace {

std::vector<media::FramePtr> decode(const std::filesystem::path& file, int count) {
  media::Demuxer demux(file.string());
  media::Decoder decoder(demux.video_stream(), media::DecoderOptions{}, file.string());
  std::vector<media::FramePtr> frames;
  media::PacketPtr pkt = media::make_packet();
  auto keep = [&](media::FramePtr f) {
    if (int(frames.size()) < count) frames.push_back(std::move(f));
  };
  while (int(frames.size()) < count && demux.read(pkt.get()))
    if (pkt->stream_index == demux.video_index()) decoder.decode(pkt.get(), keep);
  decoder.decode(nullptr, keep);
  return frames;
}

double psnr(const at::Tensor& a, const at::Tensor& b) {
  const double mse = (a.clamp(0, 1) - b.clamp(0, 1)).pow(2).mean().item<double>();
  return mse == 0 ? 99.0 : 10.0 * std::log10(1.0 / mse);
}

media::FramePtr as_format(media::FramePtr frame, AVPixelFormat format) {
  media::FrameConverter converter(format);
  return converter.convert(std::move(frame));
}

void expect_matches_swscale(const AVFrame* frame, double min_psnr, double mean_tolerance = 0.5 / 255) {
  SCOPED_TRACE(av_get_pix_fmt_name(AVPixelFormat(frame->format)));
  ASSERT_TRUE(tensor_convertible(AVPixelFormat(frame->format), frame->colorspace == AVCOL_SPC_UNSPECIFIED
                                                                   ? AVCOL_SPC_SMPTE170M
                                                                   : frame->colorspace));
  FrameToTensor swscale;
  YuvToTensor tensor_ops(c10::kCPU);
  at::Tensor expected = swscale.convert(frame), got = tensor_ops.convert(frame);
  ASSERT_EQ(got.sizes(), expected.sizes());
  EXPECT_GT(psnr(got, expected), min_psnr);
  // No systematic shift: a wrong offset or matrix moves the mean of a channel. (swscale clamps its
  // 10-bit results to [0, 1] and not its 8-bit ones; compared clamped.)
  for (int c = 0; c < 3; ++c)
    EXPECT_NEAR(got[c].clamp(0, 1).mean().item<double>(), expected[c].clamp(0, 1).mean().item<double>(), mean_tolerance)
        << "channel " << c;
}

TEST(YuvTensor, RealFootageMatchesSwscaleIn420And444AndNv12) {
  auto frames = decode(test::media("real_megamind.mkv"), 3);
  ASSERT_EQ(frames.size(), 3u);
  for (const auto& f : frames) {
    ASSERT_EQ(f->format, AV_PIX_FMT_YUV420P);
    expect_matches_swscale(f.get(), 42.0);
  }
  // Luma and chroma are resampled differently from swscale only in 4:2:0; 4:4:4 must be closer.
  media::FramePtr full = as_format(media::FramePtr(av_frame_clone(frames[1].get())), AV_PIX_FMT_YUV444P);
  expect_matches_swscale(full.get(), 50.0);
  media::FramePtr nv12 = as_format(media::FramePtr(av_frame_clone(frames[1].get())), AV_PIX_FMT_NV12);
  expect_matches_swscale(nv12.get(), 42.0);
}

TEST(YuvTensor, TenBitInputsMatchSwscale) {
  // Real footage widened to 10 bits (4:2:0 planar and P010), FFV1 4:4:4 10-bit, and HEVC 4:2:0
  // 10-bit BT.2020 with HDR10 tags. swscale's own 10-bit path is off by up to half an 8-bit code
  // value (see FollowsTheStandardFormula), hence the looser means. The two synthetic clips
  // (testsrc2: saturated colour bars with one-pixel edges) are where bilinear and bicubic chroma
  // differ most: 39.6 dB for the HEVC clip.
  auto real = decode(test::media("real_megamind.mkv"), 1);
  media::FramePtr ten = as_format(media::FramePtr(av_frame_clone(real[0].get())), AV_PIX_FMT_YUV420P10LE);
  expect_matches_swscale(ten.get(), 42.0, 1.0 / 255);
  media::FramePtr p010 = as_format(media::FramePtr(av_frame_clone(real[0].get())), AV_PIX_FMT_P010LE);
  expect_matches_swscale(p010.get(), 42.0, 1.0 / 255);
  auto ffv1 = decode(test::media("ffv1_10bit.mkv"), 1);
  ASSERT_EQ(ffv1[0]->format, AV_PIX_FMT_YUV444P10LE);
  expect_matches_swscale(ffv1[0].get(), 42.0, 1.0 / 255);
  auto hdr = decode(test::media("hdr10_10bit.mp4"), 1);
  ASSERT_EQ(hdr[0]->format, AV_PIX_FMT_YUV420P10LE);
  expect_matches_swscale(hdr[0].get(), 38.0, 1.0 / 255);
}

TEST(YuvTensor, FollowsTheStandardFormula) {
  // One 10-bit limited-range BT.601 pixel computed by hand from the standard: Y' = (Y - 64) / 876,
  // Cb = (Cb - 512) / 896, Cr likewise; R = Y' + 1.402 Cr, B = Y' + 1.772 Cb,
  // G = (Y' - 0.299 R - 0.114 B) / 0.587.
  media::FramePtr f = media::make_frame();
  f->width = 2;
  f->height = 2;
  f->format = AV_PIX_FMT_YUV444P10LE;
  f->colorspace = AVCOL_SPC_SMPTE170M;
  f->color_range = AVCOL_RANGE_MPEG;
  ASSERT_GE(av_frame_get_buffer(f.get(), 0), 0);
  const uint16_t sample[3] = {296, 428, 663};
  for (int p = 0; p < 3; ++p)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x) reinterpret_cast<uint16_t*>(f->data[p] + y * f->linesize[p])[x] = sample[p];
  const double luma = (296 - 64) / 876.0, cb = (428 - 512) / 896.0, cr = (663 - 512) / 896.0;
  const double r = luma + 1.402 * cr, b = luma + 1.772 * cb, g = (luma - 0.299 * r - 0.114 * b) / 0.587;
  at::Tensor got = YuvToTensor(c10::kCPU).convert(f.get());
  EXPECT_NEAR(got[0][1][1].item<double>(), r, 1e-5);
  EXPECT_NEAR(got[1][1][1].item<double>(), g, 1e-5);
  EXPECT_NEAR(got[2][1][1].item<double>(), b, 1e-5);
}

TEST(YuvTensor, EncodeSideAgreesWithSwscaleAndRoundTrips) {
  auto frames = decode(test::media("real_megamind.mkv"), 1);
  FrameToTensor to_rgb;
  at::Tensor rgb = to_rgb.convert(frames[0].get()).clamp(0, 1);
  for (AVPixelFormat pix : {AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV444P, AV_PIX_FMT_NV12, AV_PIX_FMT_YUV420P10LE}) {
    SCOPED_TRACE(av_get_pix_fmt_name(pix));
    media::VideoFormat vf = media::VideoFormat::of_frame(frames[0].get(), {1, 25}, {25, 1});
    vf.pix_fmt = pix;
    TensorToYuv tensor_ops(vf);
    TensorToFrame swscale(vf);
    media::FramePtr ours = tensor_ops.convert(rgb), theirs = swscale.convert(rgb);
    ASSERT_EQ(ours->format, pix);
    EXPECT_EQ(ours->colorspace, theirs->colorspace);
    // Back through swscale, both must give the same picture within a code value or so.
    FrameToTensor back;
    at::Tensor from_ours = back.convert(ours.get()), from_theirs = back.convert(theirs.get());
    EXPECT_GT(psnr(from_ours, from_theirs), 42.0);
    EXPECT_GT(psnr(from_ours, rgb), 36.0);
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(from_ours[c].mean().item<double>(), from_theirs[c].mean().item<double>(), 0.5 / 255);
  }
}

TEST(YuvTensor, OddSizesKeepTheirLastRowAndColumn) {
  // 4:2:0 with odd dimensions: the last chroma sample covers one luma row/column only.
  at::Tensor rgb = at::rand({3, 17, 33});
  media::VideoFormat vf;
  vf.width = 33;
  vf.height = 17;
  vf.pix_fmt = AV_PIX_FMT_YUV420P;
  vf.matrix = AVCOL_SPC_BT709;
  vf.range = AVCOL_RANGE_MPEG;
  media::FramePtr frame = TensorToYuv(vf).convert(rgb);
  at::Tensor back = YuvToTensor(c10::kCPU).convert(frame.get());
  ASSERT_EQ(back.sizes(), rgb.sizes());
  // Random pixels lose their own colour to 2x2 chroma averaging, but whatever the chroma, the luma
  // of the decoded RGB is the Y sample: within half a code value of the original's, to the last row
  // and column (garbage there would be off by a quarter of the range).
  auto luma = [](const at::Tensor& t) { return t[0] * 0.2126 + t[1] * 0.7152 + t[2] * 0.0722; };
  EXPECT_LT((luma(back) - luma(rgb)).abs().max().item<double>(), 0.51 / 219);
}

TEST(YuvTensor, RefusesWhatItCannotConvert) {
  EXPECT_FALSE(tensor_convertible(AV_PIX_FMT_RGB24, AVCOL_SPC_RGB));
  EXPECT_FALSE(tensor_convertible(AV_PIX_FMT_YUV420P, AVCOL_SPC_YCGCO));
  EXPECT_FALSE(tensor_convertible(AV_PIX_FMT_YUVA420P, AVCOL_SPC_BT709));
  EXPECT_FALSE(tensor_convertible(AV_PIX_FMT_YUV420P10BE, AVCOL_SPC_BT709));
  EXPECT_TRUE(tensor_convertible(AV_PIX_FMT_P010LE, AVCOL_SPC_BT2020_NCL));
  auto frames = decode(test::media("real_megamind.mkv"), 1);
  media::FramePtr rgb = as_format(std::move(frames[0]), AV_PIX_FMT_RGB24);
  EXPECT_THROW(YuvToTensor(c10::kCPU).convert(rgb.get()), Error);
}

}  // namespace
}  // namespace framelift::infer
