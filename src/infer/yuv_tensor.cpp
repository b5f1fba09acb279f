#include "infer/yuv_tensor.h"

#include <ATen/ATen.h>

#include <cstring>
#include <optional>
#include <vector>

extern "C" {
#include <libavutil/pixdesc.h>
}

#include "infer/device.h"
#include "infer/frame_tensor.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::infer {
namespace {

// Luma weights of the matrices whose luma is a fixed linear mix of R'G'B'.
struct Weights {
  double kr, kb;
  double kg() const { return 1.0 - kr - kb; }
};

std::optional<Weights> weights_of(AVColorSpace matrix) {
  switch (matrix) {
    case AVCOL_SPC_BT709: return Weights{0.2126, 0.0722};
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M: return Weights{0.299, 0.114};
    case AVCOL_SPC_SMPTE240M: return Weights{0.212, 0.087};
    case AVCOL_SPC_FCC: return Weights{0.30, 0.11};
    case AVCOL_SPC_BT2020_NCL: return Weights{0.2627, 0.0593};
    default: return std::nullopt;
  }
}

int sample_bytes(const AVPixFmtDescriptor* d) { return d->comp[0].depth > 8 ? 2 : 1; }

// The descriptor of a YUV format these converters handle, else nullptr.
const AVPixFmtDescriptor* yuv_descriptor(AVPixelFormat format) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(format);
  constexpr uint64_t refused = AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM |
                               AV_PIX_FMT_FLAG_BE | AV_PIX_FMT_FLAG_FLOAT | AV_PIX_FMT_FLAG_HWACCEL |
                               AV_PIX_FMT_FLAG_ALPHA;
  if (!d || (d->flags & refused) || d->nb_components != 3 || format == AV_PIX_FMT_XYZ12LE) return nullptr;
  const int depth = d->comp[0].depth;
  if (depth < 8 || depth > 16) return nullptr;
  const int bytes = sample_bytes(d);
  for (int i = 0; i < 3; ++i) {
    const AVComponentDescriptor& c = d->comp[i];
    if (c.depth != depth || c.step % bytes || c.offset % bytes) return nullptr;
  }
  return d;
}

// Sample values of one component, [rows, cols] int32, from the planes (uint8 or int16 rows).
at::Tensor read_component(const std::vector<at::Tensor>& planes, const AVComponentDescriptor& c, int bytes,
                          int64_t rows, int64_t cols) {
  const int64_t step = c.step / bytes, offset = c.offset / bytes;
  at::Tensor samples = planes.at(size_t(c.plane)).narrow(0, 0, rows).slice(1, offset, offset + (cols - 1) * step + 1, step);
  at::Tensor v = samples.to(at::kInt);
  if (bytes == 2) v = v.bitwise_and(0xFFFF);  // int16 holds unsigned 16-bit samples
  if (c.shift) v = at::div(v, 1 << c.shift, "floor");
  return v;
}

// Sample scaling of a depth and range: code = offset + scale * normalized value.
struct Quantization {
  double luma_offset, luma_scale, chroma_offset, chroma_scale, max_code;
};

Quantization quantization(int depth, bool full_range) {
  const double s = double(1 << (depth - 8)), max_code = double((1 << depth) - 1);
  if (full_range) return {0.0, max_code, double(1 << (depth - 1)), max_code, max_code};
  return {16.0 * s, 219.0 * s, 128.0 * s, 224.0 * s, max_code};
}

struct ChromaSize {
  int64_t rows, cols;
};

ChromaSize chroma_size(const AVPixFmtDescriptor* d, int64_t height, int64_t width) {
  return {-((-height) >> d->log2_chroma_h), -((-width) >> d->log2_chroma_w)};
}

AVColorSpace matrix_of(const AVFrame* f) {
  return media::effective_matrix(media::VideoFormat::of_frame(f, {1, 1}, {0, 1}));
}

}  // namespace

bool tensor_convertible(AVPixelFormat format, AVColorSpace matrix) {
  return yuv_descriptor(format) != nullptr && weights_of(matrix).has_value();
}

bool tensor_convertible(const AVFrame* frame) { return tensor_convertible(AVPixelFormat(frame->format), matrix_of(frame)); }

at::Tensor YuvToTensor::convert(const AVFrame* f) {
  const auto format = AVPixelFormat(f->format);
  const AVPixFmtDescriptor* d = yuv_descriptor(format);
  const AVColorSpace matrix = matrix_of(f);
  const std::optional<Weights> w = weights_of(matrix);
  if (!d || !w)
    throw Error(ErrorKind::Internal, str("tensor colour conversion: unsupported ", av_get_pix_fmt_name(format),
                                         " with matrix ", av_color_space_name(matrix)));
  const int bytes = sample_bytes(d);
  const int64_t h = f->height, wd = f->width;
  const ChromaSize cs = chroma_size(d, h, wd);

  std::vector<at::Tensor> planes(size_t(av_pix_fmt_count_planes(format)));
  for (int p = 0; p < int(planes.size()); ++p) {
    if (f->linesize[p] <= 0 || f->linesize[p] % bytes)
      throw Error(ErrorKind::Internal, str("tensor colour conversion: plane ", p, " has line size ", f->linesize[p]));
    const int64_t rows = p == d->comp[0].plane ? h : cs.rows;
    at::Tensor host = at::from_blob(f->data[p], {rows, f->linesize[p] / bytes}, bytes == 2 ? at::kShort : at::kByte);
    // On CUDA a pinned copy goes up asynchronously and outlives the frame; on the CPU the planes
    // are read in place (everything computed from them is a new tensor).
    planes[size_t(p)] = to_target(host, ExecutionTarget{device_, host.scalar_type(), ""});
  }

  const Quantization q = quantization(d->comp[0].depth, media::is_full_range(format, f->color_range));
  at::Tensor y = (read_component(planes, d->comp[0], bytes, h, wd).to(at::kFloat) - q.luma_offset) / q.luma_scale;
  at::Tensor uv = at::stack({read_component(planes, d->comp[1], bytes, cs.rows, cs.cols),
                             read_component(planes, d->comp[2], bytes, cs.rows, cs.cols)})
                      .to(at::kFloat)
                      .sub_(q.chroma_offset)
                      .div_(q.chroma_scale);
  if (cs.rows != h || cs.cols != wd) {
    std::vector<int64_t> size{cs.rows << d->log2_chroma_h, cs.cols << d->log2_chroma_w};
    uv = at::upsample_bilinear2d(uv.unsqueeze(0), size, false, c10::nullopt, c10::nullopt)[0];
    uv = uv.narrow(1, 0, h).narrow(2, 0, wd);
  }
  at::Tensor cb = uv[0], cr = uv[1];
  at::Tensor r = y + cr * (2.0 * (1.0 - w->kr));
  at::Tensor b = y + cb * (2.0 * (1.0 - w->kb));
  at::Tensor g = (y - r * w->kr - b * w->kb) / w->kg();
  return at::stack({r, g, b});
}

TensorToYuv::TensorToYuv(const media::VideoFormat& format) : format_(format) {
  if (!tensor_convertible(format.pix_fmt, media::effective_matrix(format)))
    throw Error(ErrorKind::Internal, str("tensor colour conversion: unsupported output ",
                                         av_get_pix_fmt_name(format.pix_fmt)));
}

media::FramePtr TensorToYuv::convert(const at::Tensor& image) {
  check_output_shape(image, format_);
  const AVPixFmtDescriptor* d = yuv_descriptor(format_.pix_fmt);
  const Weights w = *weights_of(media::effective_matrix(format_));
  const int bytes = sample_bytes(d);
  const int64_t h = format_.height, wd = format_.width;
  const ChromaSize cs = chroma_size(d, h, wd);
  const Quantization q = quantization(d->comp[0].depth, media::is_full_range(format_.pix_fmt, format_.range));

  at::Tensor rgb = image.to(at::kFloat).clamp(0.0, 1.0);
  at::Tensor r = rgb[0], g = rgb[1], b = rgb[2];
  at::Tensor y = r * w.kr + g * w.kg() + b * w.kb;
  at::Tensor uv = at::stack({(b - y) / (2.0 * (1.0 - w.kb)), (r - y) / (2.0 * (1.0 - w.kr))});
  if (cs.rows != h || cs.cols != wd) {
    std::vector<int64_t> kernel{int64_t(1) << d->log2_chroma_h, int64_t(1) << d->log2_chroma_w};
    // ceil_mode: an odd last row or column averages the samples it has.
    uv = at::avg_pool2d(uv.unsqueeze(0), kernel, kernel, {0, 0}, /*ceil_mode=*/true, false)[0];
  }
  auto code = [&](const at::Tensor& v, double offset, double scale) {
    return (v * scale + offset).round_().clamp_(0.0, q.max_code).to(at::kInt);
  };
  const at::Tensor values[3] = {code(y, q.luma_offset, q.luma_scale), code(uv[0], q.chroma_offset, q.chroma_scale),
                                code(uv[1], q.chroma_offset, q.chroma_scale)};

  media::FramePtr frame = blank_output_frame(format_);
  const auto dtype = bytes == 2 ? at::kShort : at::kByte;
  for (int p = 0; p < av_pix_fmt_count_planes(format_.pix_fmt); ++p) {
    const int64_t rows = p == d->comp[0].plane ? h : cs.rows, row_samples = frame->linesize[p] / bytes;
    at::Tensor plane = at::zeros({rows, row_samples}, values[0].options());
    for (int i = 0; i < 3; ++i) {
      const AVComponentDescriptor& c = d->comp[i];
      if (c.plane != p) continue;
      const int64_t step = c.step / bytes, offset = c.offset / bytes, cols = values[i].size(1);
      plane.slice(1, offset, offset + (cols - 1) * step + 1, step).copy_(values[i] * (1 << c.shift));
    }
    // int32 -> int16 keeps the low 16 bits: the unsigned sample's bit pattern.
    at::Tensor host = plane.to(dtype).to(at::kCPU).contiguous();
    std::memcpy(frame->data[p], host.data_ptr(), size_t(rows * frame->linesize[p]));
  }
  return frame;
}

}  // namespace framelift::infer
