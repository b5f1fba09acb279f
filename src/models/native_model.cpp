#include "models/native_model.h"

#include <ATen/ATen.h>

#include "arch/declaration.h"
#include "infer/conv_layout.h"
#include "infer/fp32_islands.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += shape[i] < 0 ? std::string("*") : std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace

WeightReader::WeightReader(const weights::StateDict& dict, std::string source)
    : dict_(dict), source_(std::move(source)) {}

const at::Tensor& WeightReader::checked(const std::string& key, const std::vector<int64_t>& shape) {
  auto it = dict_.find(key);
  if (it == dict_.end()) throw Error(ErrorKind::Model, framelift::str(source_, ": missing tensor ", key));
  const at::Tensor& t = it->second;
  bool ok = t.dim() == static_cast<int64_t>(shape.size());
  for (size_t i = 0; ok && i < shape.size(); ++i) ok = shape[i] < 0 || t.size(static_cast<int64_t>(i)) == shape[i];
  if (!ok) {
    throw Error(ErrorKind::Model, framelift::str(source_, ": tensor ", key, " has shape ", t.sizes(),
                                                 ", expected ", shape_text(shape)));
  }
  used_.insert(key);
  return t;
}

at::Tensor WeightReader::tensor(const std::string& key, const std::vector<int64_t>& shape) {
  const at::Tensor& t = checked(key, shape);
  if (!t.is_floating_point())
    throw Error(ErrorKind::Model, framelift::str(source_, ": tensor ", key, " is not floating point (", t.scalar_type(), ")"));
  return t.to(at::kFloat).contiguous();
}

void WeightReader::recomputed(const std::string& key, const std::vector<int64_t>& shape) { checked(key, shape); }

void WeightReader::expect_all_used() const {
  for (const auto& [key, value] : dict_) {
    if (!used_.count(key))
      throw Error(ErrorKind::Model, str(source_, ": unexpected tensor ", key, " for this architecture"));
  }
}

at::Tensor Conv2d::operator()(const at::Tensor& x) const {
  return infer::conv2d(x, weight, bias, stride, padding, 1, groups);
}

at::Tensor div2k_mean(const at::Tensor& x, int64_t channels) {
  if (channels != 3) return at::zeros({1, 1, 1, 1}, x.options());
  return at::tensor({0.4488f, 0.4371f, 0.4040f}).to(x.options()).view({1, 3, 1, 1});
}

at::Tensor ConvTranspose2d::operator()(const at::Tensor& x) const {
  return infer::conv_transpose2d(x, weight, bias, {stride, stride}, {padding, padding}, {0, 0}, 1, {1, 1});
}

Conv2d read_conv(WeightReader& r, const std::string& prefix, int64_t in, int64_t out, int64_t k, int64_t stride,
                 int64_t padding, bool bias) {
  Conv2d c;
  c.weight = r.tensor(prefix + ".weight", {out, in, k, k});
  if (bias) c.bias = r.tensor(prefix + ".bias", {out});
  c.stride = stride;
  c.padding = padding < 0 ? (k - 1) / 2 : padding;
  return c;
}

at::Tensor BatchNorm2d::operator()(const at::Tensor& x) const {
  return at::addcmul(shift.view({1, -1, 1, 1}), x, scale.view({1, -1, 1, 1}));
}

BatchNorm2d read_batch_norm(WeightReader& r, const std::string& prefix, int64_t channels) {
  BatchNorm2d n;
  n.scale = r.tensor(prefix + ".weight", {channels}) / (r.tensor(prefix + ".running_var", {channels}) + 1e-5).sqrt();
  n.shift = r.tensor(prefix + ".bias", {channels}) - r.tensor(prefix + ".running_mean", {channels}) * n.scale;
  if (r.has(prefix + ".num_batches_tracked")) r.recomputed(prefix + ".num_batches_tracked", {});  // training bookkeeping
  return n;
}

Conv2d read_conv_batch_norm(WeightReader& r, const std::string& conv, const std::string& bn, int64_t in, int64_t out, int64_t k) {
  Conv2d c = read_conv(r, conv, in, out, k);
  const BatchNorm2d n = read_batch_norm(r, bn, out);
  c.weight = c.weight * n.scale.view({-1, 1, 1, 1});
  c.bias = c.bias * n.scale + n.shift;
  return c;
}

ConvTranspose2d read_deconv(WeightReader& r, const std::string& prefix, int64_t in, int64_t out, int64_t k,
                            int64_t stride, int64_t padding, bool bias) {
  ConvTranspose2d c;
  c.weight = r.tensor(prefix + ".weight", {in, out, k, k});
  if (bias) c.bias = r.tensor(prefix + ".bias", {out});
  c.stride = stride;
  c.padding = padding;
  return c;
}

at::Tensor upsample_nearest(const at::Tensor& x, int64_t factor) {
  return at::upsample_nearest2d(x, {x.size(2) * factor, x.size(3) * factor}, c10::nullopt, c10::nullopt);
}

void visit(Conv2d& conv, const TensorVisitor& f) {
  f(conv.weight);
  if (conv.bias.defined()) f(conv.bias);
}

void visit(ConvTranspose2d& conv, const TensorVisitor& f) {
  f(conv.weight);
  if (conv.bias.defined()) f(conv.bias);
}

at::Tensor NativeModel::forward(const at::Tensor& input) {
  at::NoGradGuard no_grad;
  if (input.dim() != 4 || input.size(1) != info_.in_channels) {
    throw Error(ErrorKind::Model, framelift::str(source_, ": ", info_.arch, " expects [N, ", info_.in_channels,
                                                 ", H, W], got ", input.sizes()));
  }
  const int64_t h = input.size(2), w = input.size(3), m = info_.size_multiple;
  if (h % m || w % m)
    throw Error(ErrorKind::Model, str(source_, ": input ", w, "x", h, " is not a multiple of ", m));
  // Channels-last lets oneDNN (CPU) and cuDNN (tensor cores) skip layout reorders between the small
  // convs; the large-kernel ones pick their own (infer/conv_layout.h).
  at::Tensor x = input.to(device_, dtype_).contiguous(infer::activation_format(device_));
  try {
    return run(x).to(input.scalar_type()).contiguous();
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    throw Error(ErrorKind::Model, str(source_, ": ", info_.arch, ": ", what.substr(0, what.find('\n'))));
  }
}

void NativeModel::to(c10::Device device, c10::ScalarType dtype) {
  visit_weights([&](at::Tensor& t) {
    if (t.defined()) t = t.to(device, dtype);  // a conv without bias has none
  });
  device_ = device;
  dtype_ = dtype;
}

ModelInfo declared_info(const DetectedArch& d) {
  const arch::ArchCost geometry = arch::cost(d.arch, d.scale, d.params);
  return ModelInfo{d.arch,         d.scale,          d.in_channels, d.out_channels, geometry.size_multiple, geometry.tile_overlap,
                   geometry.tiled, geometry.tile_grid};
}

}  // namespace framelift::models
