// Resize/Upsample, DepthToSpace/SpaceToDepth, Pad and GridSample.
//
// Resize follows the ONNX definition axis by axis rather than mapping onto ATen's upsample
// kernels: every coordinate mode, nearest rounding and cubic coefficient the spec has then takes
// the same path, where ATen has only PyTorch's own few. Each resized axis is a sum of gathered
// taps: output i reads input taps at clamped integer positions around x_original(i), weighted by
// the mode's coefficients (nearest: 1 tap, linear: 2, cubic: 4).
#include <algorithm>
#include <cmath>

#include <ATen/ATen.h>

#include "infer/fp32_islands.h"
#include "models/onnx/builtin_ops.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models::onnx {
namespace {

struct ResizeMode {
  std::string mode, coordinates, nearest;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 10.0;  // tf_crop_and_resize: the value of an output that samples outside the input
};

// tf_crop_and_resize's region of one axis, as fractions of the input (the roi input).
struct AxisCrop {
  double start = 0, end = 1;
};

bool crops(const ResizeMode& m) { return m.coordinates == "tf_crop_and_resize"; }

double original_coordinate(const ResizeMode& m, int64_t x, double scale, int64_t in, int64_t out, AxisCrop crop) {
  const double xd = static_cast<double>(x);
  if (crops(m)) {
    const double span = static_cast<double>(in - 1);
    return out > 1 ? crop.start * span + xd * (crop.end - crop.start) * span / static_cast<double>(out - 1)
                   : 0.5 * (crop.start + crop.end) * span;
  }
  if (m.coordinates == "asymmetric") return xd / scale;
  if (m.coordinates == "align_corners") return out == 1 ? 0.0 : xd * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (m.coordinates == "pytorch_half_pixel") return out > 1 ? (xd + 0.5) / scale - 0.5 : 0.0;
  if (m.coordinates == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out) / (scale * static_cast<double>(in));
    const double center = static_cast<double>(in) / 2.0;
    return center * (1 - adjustment) + (xd + 0.5) / scale - 0.5;
  }
  return (xd + 0.5) / scale - 0.5;  // half_pixel
}

int64_t nearest_index(const std::string& rounding, double x) {
  if (rounding == "floor") return static_cast<int64_t>(std::floor(x));
  if (rounding == "ceil") return static_cast<int64_t>(std::ceil(x));
  const double f = std::floor(x);
  if (x - f == 0.5) return static_cast<int64_t>(f) + (rounding == "round_prefer_ceil" ? 1 : 0);
  return static_cast<int64_t>(std::lround(x));
}

std::vector<double> cubic_coefficients(double r, double a) {
  auto outer = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };  // 1 <= t <= 2
  auto inner = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };          // 0 <= t <= 1
  return {outer(r + 1), inner(r), inner(1 - r), outer(2 - r)};
}

// The taps and weights for one axis ([taps, out] each), and which outputs sample outside the
// input (tf_crop_and_resize gives those the extrapolation value; empty when none do).
struct AxisTaps {
  at::Tensor index, weight;
  std::vector<uint8_t> outside;
};

AxisTaps axis_taps(const ResizeMode& m, int64_t in, int64_t out, double scale, AxisCrop crop) {
  const int taps = m.mode == "nearest" ? 1 : m.mode == "linear" ? 2 : 4;
  std::vector<int64_t> index(static_cast<size_t>(taps * out));
  std::vector<double> weight(static_cast<size_t>(taps * out));
  std::vector<uint8_t> outside(static_cast<size_t>(out), 0);
  bool any_outside = false;
  for (int64_t i = 0; i < out; ++i) {
    // ONNX Runtime computes coordinates in float: a nearest tie must fall the same way.
    const double x = static_cast<float>(original_coordinate(m, i, scale, in, out, crop));
    if (crops(m) && (x < 0 || x > static_cast<double>(in - 1))) any_outside = outside[static_cast<size_t>(i)] = 1;
    std::vector<int64_t> at_;
    std::vector<double> w;
    if (m.mode == "nearest") {
      at_ = {nearest_index(m.nearest, x)};
      w = {1};
    } else {
      const double f = std::floor(x), r = x - f;
      const int64_t base = static_cast<int64_t>(f);
      if (m.mode == "linear") {
        at_ = {base, base + 1};
        w = {1 - r, r};
      } else {
        at_ = {base - 1, base, base + 1, base + 2};
        w = cubic_coefficients(r, m.cubic_a);
      }
    }
    if (m.exclude_outside) {
      double sum = 0;
      for (size_t t = 0; t < at_.size(); ++t) {
        if (at_[t] < 0 || at_[t] >= in) w[t] = 0;
        sum += w[t];
      }
      if (sum != 0)
        for (auto& v : w) v /= sum;
    }
    for (size_t t = 0; t < at_.size(); ++t) {
      index[t * static_cast<size_t>(out) + static_cast<size_t>(i)] = std::max<int64_t>(0, std::min(at_[t], in - 1));
      weight[t * static_cast<size_t>(out) + static_cast<size_t>(i)] = w[t];
    }
  }
  if (!any_outside) outside.clear();
  return {at::tensor(index, at::kLong).reshape({taps, out}), at::tensor(weight, at::kDouble).reshape({taps, out}), std::move(outside)};
}

at::Tensor resize_axis(const at::Tensor& x, int64_t axis, int64_t out, double scale, const ResizeMode& m, AxisCrop crop) {
  const int64_t in = x.size(axis);
  if (in == out && scale == 1.0 && (!crops(m) || (crop.start == 0 && crop.end == 1))) return x;
  const AxisTaps taps = axis_taps(m, in, out, scale, crop);
  const at::Tensor index = taps.index.to(x.device());
  std::vector<int64_t> view(static_cast<size_t>(x.dim()), 1);
  view[static_cast<size_t>(axis)] = out;
  at::Tensor y;
  if (m.mode == "nearest") {
    y = x.index_select(axis, index[0]);
  } else {
    // The weights sum in the activation's type; taps are exact copies.
    const at::Tensor w = taps.weight.to(x.device(), x.scalar_type());
    for (int64_t t = 0; t < index.size(0); ++t) {
      at::Tensor term = x.index_select(axis, index[t]) * w[t].view(view);
      y = y.defined() ? y + term : term;
    }
  }
  if (taps.outside.empty()) return y;
  const at::Tensor outside = at::tensor(std::vector<int64_t>(taps.outside.begin(), taps.outside.end()), at::kLong)
                                 .to(at::kBool).to(x.device()).view(view);
  return at::where(outside, at::scalar_tensor(m.extrapolation, y.options()), y);
}

ResizeMode read_resize_mode(const NodeSpec& spec) {
  ResizeMode m;
  m.mode = spec.choice("mode", "nearest", {"nearest", "linear", "cubic"});
  m.coordinates = spec.choice("coordinate_transformation_mode", "half_pixel",
                              {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric",
                               "tf_crop_and_resize"});
  m.nearest = spec.choice("nearest_mode", "round_prefer_floor", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  m.cubic_a = spec.f("cubic_coeff_a", -0.75f);
  m.exclude_outside = spec.i("exclude_outside", 0) != 0;
  m.extrapolation = spec.f("extrapolation_value", 10.f);
  if (spec.i("antialias", 0) != 0) spec.fail("antialias=1 is not supported");
  if (spec.has("axes")) spec.fail("the axes attribute is not supported");
  if (spec.choice("keep_aspect_ratio_policy", "stretch", {"stretch"}) != "stretch") spec.fail("unreachable");
  return m;
}

// tf_crop_and_resize's roi input: all starts, then all ends, one per axis.
std::vector<AxisCrop> read_crops(const Tensors& in, const ResizeMode& m, size_t rank) {
  std::vector<AxisCrop> crop(rank);
  if (!crops(m)) return crop;
  if (in.size() < 2 || !in[1].defined() || in[1].numel() != static_cast<int64_t>(2 * rank))
    throw Error(ErrorKind::Model, str("Resize: tf_crop_and_resize needs a roi of ", 2 * rank, " values"));
  const at::Tensor roi = in[1].to(at::kCPU).to(at::kDouble).contiguous();
  for (size_t k = 0; k < rank; ++k) crop[k] = {roi.data_ptr<double>()[k], roi.data_ptr<double>()[k + rank]};
  return crop;
}

// Resize(X, roi, scales, sizes): sizes win when given; scales give floor(in * scale), and with
// tf_crop_and_resize floor(in * (end - start) * scale), as the spec has it.
Tensors run_resize(const Tensors& in, const ResizeMode& m, size_t scales_input, size_t sizes_input) {
  at::Tensor x = input(in, 0, "Resize");
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (sizes_input < in.size() && in[sizes_input].defined() && in[sizes_input].numel() > 0) sizes = int_values(in[sizes_input]);
  if (sizes.empty() && scales_input < in.size() && in[scales_input].defined() && in[scales_input].numel() > 0) {
    at::Tensor s = in[scales_input].to(at::kCPU).to(at::kDouble).contiguous();
    scales.assign(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
  }
  const auto rank = static_cast<size_t>(x.dim());
  if (sizes.empty() && scales.size() != rank)
    throw Error(ErrorKind::Model, str("Resize: needs ", rank, " scales or sizes, got ", scales.size()));
  if (!sizes.empty() && sizes.size() != rank) throw Error(ErrorKind::Model, str("Resize: needs ", rank, " sizes"));
  const std::vector<AxisCrop> crop = read_crops(in, m, rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t len = x.size(static_cast<int64_t>(k));
    // In float, as ONNX Runtime reads roi: 0.9f - -0.1f is 1 there and a hair under 1 in double.
    const double kept = static_cast<double>(static_cast<float>(crop[k].end) - static_cast<float>(crop[k].start));
    const int64_t out = sizes.empty() ? static_cast<int64_t>(std::floor(static_cast<double>(len) * kept * scales[k])) : sizes[k];
    const double scale = sizes.empty() ? scales[k] : static_cast<double>(out) / static_cast<double>(len);
    if (out <= 0 || scale <= 0) throw Error(ErrorKind::Model, str("Resize: output size ", out, " on axis ", k));
    x = resize_axis(x, static_cast<int64_t>(k), out, scale, m, crop[k]);
  }
  return Tensors{x.contiguous()};
}

std::unique_ptr<OnnxOp> resize(const NodeSpec& spec) {
  const ResizeMode m = read_resize_mode(spec);
  return lambda_op([m](const Tensors& in, const RunContext& context) {
    // A crop region is a fraction of the whole picture: a tile would crop its own.
    if (crops(m) && context.whole_picture) *context.whole_picture = true;
    return run_resize(in, m, 2, 3);
  });
}

// Upsample (deprecated since opset 10, still in old exports): Resize with asymmetric coordinates.
std::unique_ptr<OnnxOp> upsample(const NodeSpec& spec) {
  ResizeMode m;
  const std::string mode = spec.choice("mode", "nearest", {"nearest", "linear", "bilinear"});
  m.mode = mode == "nearest" ? "nearest" : "linear";
  m.coordinates = "asymmetric";
  m.nearest = "floor";
  return lambda_op([m](const Tensors& in, const RunContext&) { return run_resize(in, m, 1, 99); });
}

std::unique_ptr<OnnxOp> depth_to_space(const NodeSpec& spec) {
  const int64_t b = spec.i("blocksize", 0);
  if (b < 1) spec.fail("blocksize must be positive");
  const bool crd = spec.choice("mode", "DCR", {"DCR", "CRD"}) == "CRD";
  return lambda_op([b, crd](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "DepthToSpace");
    if (crd) return Tensors{at::pixel_shuffle(x, b)};
    const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
    return Tensors{x.reshape({n, b, b, c / (b * b), h, w}).permute({0, 3, 4, 1, 5, 2}).reshape({n, c / (b * b), h * b, w * b})};
  });
}

std::unique_ptr<OnnxOp> space_to_depth(const NodeSpec& spec) {
  const int64_t b = spec.i("blocksize", 0);
  if (b < 1) spec.fail("blocksize must be positive");
  return lambda_op([b](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "SpaceToDepth");
    const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
    return Tensors{x.reshape({n, c, h / b, b, w / b, b}).permute({0, 3, 5, 1, 2, 4}).reshape({n, c * b * b, h / b, w / b})};
  });
}

// Wrap padding (opset 19) on any axes: negative pads crop first, as ONNX Runtime and the spec's
// reference do, then output index i reads the cropped input's (i - begin) mod size. Pure indexing,
// so every dtype and precision is exact.
at::Tensor wrap_pad(const at::Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end) {
  at::Tensor y = x;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const auto a = static_cast<size_t>(d);
    if (!begin[a] && !end[a]) continue;
    const int64_t crop_begin = std::max<int64_t>(0, -begin[a]), crop_end = std::max<int64_t>(0, -end[a]);
    const int64_t size = y.size(d) - crop_begin - crop_end;
    if (size <= 0) throw Error(ErrorKind::Model, str("Pad: wrap padding crops all ", y.size(d), " values of axis ", d));
    y = y.narrow(d, crop_begin, size);
    const int64_t before = std::max<int64_t>(0, begin[a]), after = std::max<int64_t>(0, end[a]);
    const at::Tensor index = at::remainder(at::arange(-before, size + after, at::kLong), size);
    y = y.index_select(d, index.to(y.device()));
  }
  return y;
}

// Pad(data, pads, constant_value, axes): pads are all begins, then all ends, per axis.
std::unique_ptr<OnnxOp> pad(const NodeSpec& spec) {
  const std::string mode = spec.opset >= 19 ? spec.choice("mode", "constant", {"constant", "reflect", "edge", "wrap"})
                                             : spec.choice("mode", "constant", {"constant", "reflect", "edge"});
  return lambda_op([mode](const Tensors& in, const RunContext& context) {
    const at::Tensor& x = input(in, 0, "Pad");
    const std::vector<int64_t> given = int_values(input(in, 1, "Pad"));
    const int64_t rank = x.dim();
    std::vector<int64_t> axes;
    if (in.size() > 3 && in[3].defined()) axes = int_values(in[3]);
    else
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    if (given.size() != 2 * axes.size()) throw Error(ErrorKind::Model, str("Pad: ", given.size(), " pads for ", axes.size(), " axes"));
    std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
    for (size_t k = 0; k < axes.size(); ++k) {
      const auto a = static_cast<size_t>(normalize_axis(axes[k], rank, "Pad"));
      begin[a] = given[k];
      end[a] = given[k + axes.size()];
    }
    std::vector<int64_t> torch_pads;  // last axis first
    int64_t outer_padded = 0;
    for (int64_t d = rank; d-- > 0;) {
      torch_pads.push_back(begin[static_cast<size_t>(d)]);
      torch_pads.push_back(end[static_cast<size_t>(d)]);
      if (d < rank - 2 && (begin[static_cast<size_t>(d)] || end[static_cast<size_t>(d)])) ++outer_padded;
    }
    if (mode == "wrap") {
      // Wrapping H or W reads the picture's far edge, which a tile does not hold: untiled.
      if (context.whole_picture && rank == 4 && (begin[2] || end[2] || begin[3] || end[3])) *context.whole_picture = true;
      return Tensors{wrap_pad(x, begin, end)};
    }
    if (mode == "constant") {
      const double value = in.size() > 2 && in[2].defined() && in[2].numel() > 0 ? in[2].item<double>() : 0.0;
      return Tensors{at::constant_pad_nd(x, torch_pads, value)};
    }
    if (rank != 4 || outer_padded) throw Error(ErrorKind::Model, str("Pad: ", mode, " padding only pads H and W of a 4-D tensor"));
    const std::vector<int64_t> hw = {torch_pads[0], torch_pads[1], torch_pads[2], torch_pads[3]};
    return Tensors{mode == "reflect" ? infer::reflect_pad2d(x, hw) : infer::replicate_pad2d(x, hw)};
  });
}

std::unique_ptr<OnnxOp> grid_sample(const NodeSpec& spec) {
  const std::string mode = spec.choice("mode", spec.opset >= 20 ? "linear" : "bilinear",
                                       {"bilinear", "linear", "nearest", "bicubic", "cubic"});
  const std::string padding = spec.choice("padding_mode", "zeros", {"zeros", "border", "reflection"});
  const bool align = spec.i("align_corners", 0) != 0;
  const int64_t interp = mode == "nearest" ? 1 : (mode == "bicubic" || mode == "cubic") ? 2 : 0;
  const int64_t pad = padding == "zeros" ? 0 : padding == "border" ? 1 : 2;
  return lambda_op([=](const Tensors& in, const RunContext&) {
    const at::Tensor& x = input(in, 0, "GridSample");
    const at::Tensor& grid = input(in, 1, "GridSample");
    if (x.dim() != 4) throw Error(ErrorKind::Model, "GridSample: only 4-D inputs are supported");
    // libtorch 1.13's CPU grid sampler has no reduced-precision kernel: an fp32 island there.
    if (x.is_cpu() && x.scalar_type() != at::kFloat && x.scalar_type() != at::kDouble)
      return Tensors{at::grid_sampler_2d(x.to(at::kFloat), grid.to(at::kFloat), interp, pad, align).to(x.scalar_type())};
    return Tensors{at::grid_sampler_2d(x, grid.to(x.scalar_type()), interp, pad, align)};
  });
}

}  // namespace

void add_resample_ops(OpTable& t) {
  t["Resize"] = resize;
  t["Upsample"] = upsample;
  t["DepthToSpace"] = depth_to_space;
  t["SpaceToDepth"] = space_to_depth;
  t["Pad"] = pad;
  t["GridSample"] = grid_sample;
}

}  // namespace framelift::models::onnx
