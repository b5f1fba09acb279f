#include "models/dysample.h"

#include <ATen/ATen.h>

namespace framelift::models {

DySample::DySample(WeightReader& r, const std::string& prefix, int64_t in, int64_t out, int64_t scale, int64_t groups)
    : scale_(scale), groups_(groups) {
  const int64_t positions = 2 * groups * scale * scale;
  offset_ = read_conv(r, prefix + ".offset", in, positions, 1);
  scope_ = read_conv(r, prefix + ".scope", in, positions, 1, 1, 0, false);
  init_pos_ = r.tensor(prefix + ".init_pos", {1, positions, 1, 1});
  if (scale != 1) end_ = read_conv(r, prefix + ".end_conv", in, out, 1);
}

at::Tensor DySample::grid(const at::Tensor& x) const {
  const int64_t n = x.size(0), h = x.size(2), w = x.size(3);
  const at::Tensor offset = (offset_(x) * at::sigmoid(scope_(x)) * 0.5 + init_pos_).view({n, 2, -1, h, w});
  // Pixel centres: channel 0 the column (x), channel 1 the row (y), as grid_sample reads them.
  const auto opts = x.options();
  const at::Tensor cols = (at::arange(w, opts) + 0.5).view({1, w}).expand({h, w});
  const at::Tensor rows = (at::arange(h, opts) + 0.5).view({h, 1}).expand({h, w});
  const at::Tensor centres = at::stack({cols, rows}).view({1, 2, 1, h, w});
  const at::Tensor size = at::tensor({double(w), double(h)}, opts).view({1, 2, 1, 1, 1});
  const at::Tensor coords = 2 * (centres + offset) / size - 1;
  return at::pixel_shuffle(coords.reshape({n, -1, h, w}), scale_)
      .view({n, 2, -1, scale_ * h, scale_ * w})
      .permute({0, 2, 3, 4, 1})
      .contiguous()
      .flatten(0, 1);
}

at::Tensor DySample::operator()(const at::Tensor& input) const {
  // Positions are fractions of the frame: in bf16 (8 bits) a 1000 px row would be off by
  // pixels. Computed and sampled in fp32, whatever the network's precision.
  const auto dtype = input.scalar_type();
  auto f32 = [](const Conv2d& c) {
    return Conv2d{c.weight.defined() ? c.weight.to(at::kFloat) : c.weight, c.bias.defined() ? c.bias.to(at::kFloat) : c.bias,
                  c.stride, c.padding};
  };
  DySample fp32 = *this;
  fp32.offset_ = f32(offset_);
  fp32.scope_ = f32(scope_);
  fp32.end_ = f32(end_);
  fp32.init_pos_ = init_pos_.to(at::kFloat);
  const at::Tensor x = input.to(at::kFloat).contiguous();
  const int64_t n = x.size(0), h = x.size(2), w = x.size(3);
  at::Tensor y = at::grid_sampler(x.reshape({n * groups_, -1, h, w}), fp32.grid(x), /*bilinear*/ 0, /*border*/ 1,
                                  /*align_corners*/ false)
                     .view({n, -1, scale_ * h, scale_ * w});
  if (scale_ != 1) y = fp32.end_(y);
  return y.to(dtype);
}

void DySample::visit_weights(const TensorVisitor& f) {
  visit(offset_, f);
  visit(scope_, f);
  if (end_.weight.defined()) visit(end_, f);
  f(init_pos_);
}

}  // namespace framelift::models
