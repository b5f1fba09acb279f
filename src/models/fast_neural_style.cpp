// Fast neural style (Johnson et al. 2016, "Perceptual Losses for Real-Time Style Transfer"): the
// TransformerNet of pytorch/examples' fast_neural_style, whose .pth files (candy, mosaic,
// rain_princess, udnie) are what the style-transfer guides use. A 9x9 convolution, two stride-2
// 3x3 convolutions, residual blocks, two nearest-2x-then-3x3 upsamplings and a 9x9 convolution
// back to RGB; every convolution reflection-padded, every one but the last followed by an instance
// normalisation (affine) and all but the residual blocks' second by a ReLU.
//
// It works on 0-255 pixels (upstream's stylize multiplies by 255), so the frame is scaled in and
// out here. Its strided convolutions round sizes up and the upsamplings double them: a side that is
// no multiple of 4 comes out longer (37 -> 19 -> 10 -> 40), and upstream keeps that; framelift keeps
// the frame's size, the top-left part of that output, where the input's pixels map. Instance
// normalisation takes statistics over the whole frame, so the network runs untiled.
//
// State dict: conv1, conv2, conv3, res1..resN.{conv1,conv2}, deconv1, deconv2, deconv3 (each
// "<p>.conv2d.weight/bias"), in1..in5 and res*.in{1,2} (weight, bias). Old checkpoints also hold
// InstanceNorm running_mean/running_var, which upstream's stylize deletes before loading: read
// here as unused buffers. Widths (32/64/128 and 5 blocks as published) come off the shapes.
#include <ATen/ATen.h>

#include "arch/declaration.h"
#include "infer/fp32_islands.h"
#include "models/builtin_architectures.h"
#include "models/native_model.h"
#include "models/state_dict_keys.h"
#include "util/error.h"
#include "util/str.h"

namespace framelift::models {
namespace {

constexpr double kEps = 1e-5;  // torch.nn.InstanceNorm2d's
constexpr int64_t kMaxWidth = 4096;
constexpr int kMaxBlocks = 64;

struct ReflectConv {
  Conv2d conv;
  int64_t pad = 0;
  at::Tensor operator()(const at::Tensor& x) const { return conv(infer::reflect_pad2d(x, {pad, pad, pad, pad})); }
};

struct InstanceNorm {
  at::Tensor weight, bias;
  // In fp32 whatever the run's precision: statistics over a whole frame want the mantissa.
  at::Tensor operator()(const at::Tensor& x) const {
    const at::Tensor y = at::instance_norm(x.to(at::kFloat), weight.to(at::kFloat), bias.to(at::kFloat), {}, {}, true, 0.1, kEps, false);
    return y.to(x.scalar_type());
  }
};

ReflectConv read_reflect_conv(WeightReader& r, const std::string& p, int64_t in, int64_t out, int64_t k, int64_t stride = 1) {
  return {read_conv(r, p + ".conv2d", in, out, k, stride, 0), k / 2};
}

InstanceNorm read_norm(WeightReader& r, const std::string& p, int64_t c) {
  // Deprecated buffers of old InstanceNorm checkpoints: the normalisation uses the frame's own statistics.
  for (const char* buffer : {".running_mean", ".running_var"})
    if (r.has(p + buffer)) r.recomputed(p + buffer, {c});
  return {r.tensor(p + ".weight", {c}), r.tensor(p + ".bias", {c})};
}

struct ResidualBlock {
  ReflectConv conv1, conv2;
  InstanceNorm in1, in2;
  at::Tensor operator()(const at::Tensor& x) const { return x + in2(conv2(at::relu(in1(conv1(x))))); }
};

class FastNeuralStyle : public NativeModel {
 public:
  FastNeuralStyle(const weights::StateDict& dict, const DetectedArch& d, const std::string& source) : NativeModel(declared_info(d), source) {
    WeightReader r(dict, source);
    const int64_t c1 = int64_t(d.params.get("c1", 32)), c2 = int64_t(d.params.get("c2", 64)), c3 = int64_t(d.params.get("c3", 128));
    down_ = {read_reflect_conv(r, "conv1", 3, c1, 9), read_reflect_conv(r, "conv2", c1, c2, 3, 2), read_reflect_conv(r, "conv3", c2, c3, 3, 2)};
    down_norms_ = {read_norm(r, "in1", c1), read_norm(r, "in2", c2), read_norm(r, "in3", c3)};
    for (int i = 1; i <= int(d.params.get("blocks", 5)); ++i) {
      const std::string p = str("res", i);
      blocks_.push_back({read_reflect_conv(r, p + ".conv1", c3, c3, 3), read_reflect_conv(r, p + ".conv2", c3, c3, 3),
                         read_norm(r, p + ".in1", c3), read_norm(r, p + ".in2", c3)});
    }
    up_ = {read_reflect_conv(r, "deconv1", c3, c2, 3), read_reflect_conv(r, "deconv2", c2, c1, 3)};
    up_norms_ = {read_norm(r, "in4", c2), read_norm(r, "in5", c1)};
    out_ = read_reflect_conv(r, "deconv3", c1, 3, 9);
    r.expect_all_used();
  }

 protected:
  at::Tensor run(const at::Tensor& input) override {
    at::Tensor y = input * 255.0;
    for (size_t i = 0; i < down_.size(); ++i) y = at::relu(down_norms_[i](down_[i](y)));
    for (const ResidualBlock& b : blocks_) y = b(y);
    for (size_t i = 0; i < up_.size(); ++i) y = at::relu(up_norms_[i](up_[i](upsample_nearest(y, 2))));
    y = out_(y) * (1.0 / 255.0);
    return y.narrow(2, 0, input.size(2)).narrow(3, 0, input.size(3));
  }

  void visit_weights(const TensorVisitor& f) override {
    const auto norm = [&](InstanceNorm& n) {
      f(n.weight);
      f(n.bias);
    };
    for (ReflectConv& c : down_) visit(c.conv, f);
    for (ReflectConv& c : up_) visit(c.conv, f);
    visit(out_.conv, f);
    for (InstanceNorm& n : down_norms_) norm(n);
    for (InstanceNorm& n : up_norms_) norm(n);
    for (ResidualBlock& b : blocks_) {
      visit(b.conv1.conv, f);
      visit(b.conv2.conv, f);
      norm(b.in1);
      norm(b.in2);
    }
  }

 private:
  std::vector<ReflectConv> down_, up_;
  std::vector<InstanceNorm> down_norms_, up_norms_;
  std::vector<ResidualBlock> blocks_;
  ReflectConv out_;
};

std::optional<DetectedArch> detect(const weights::StateDict& dict, const std::string& source) {
  if (!has_keys(dict, {"conv1.conv2d.weight", "in1.weight", "res1.conv1.conv2d.weight", "deconv1.conv2d.weight", "deconv3.conv2d.weight"}))
    return std::nullopt;
  const auto c1 = dim_of(dict, "conv1.conv2d.weight", 4, 0), c2 = dim_of(dict, "conv2.conv2d.weight", 4, 0),
             c3 = dim_of(dict, "conv3.conv2d.weight", 4, 0);
  if (!c1 || !c2 || !c3)
    throw Error(ErrorKind::Model, str(source, ": fast neural style layout: conv1, conv2 or conv3 is not a convolution"));
  for (const int64_t c : {*c1, *c2, *c3})
    if (c < 1 || c > kMaxWidth)
      throw Error(ErrorKind::Model, str(source, ": fast neural style layout: a width of ", c, " channels (1 to ", kMaxWidth, ")"));
  const std::set<int> blocks = key_indices(dict, "res");
  if (blocks.empty() || int(blocks.size()) > kMaxBlocks || *blocks.begin() != 1 || *blocks.rbegin() != int(blocks.size()))
    throw Error(ErrorKind::Model, str(source, ": fast neural style layout: residual blocks must be res1..resN (N at most ", kMaxBlocks, ")"));
  DetectedArch d;
  d.arch = "fast_neural_style";
  d.scale = 1;
  d.params = {{"c1", double(*c1)}, {"c2", double(*c2)}, {"c3", double(*c3)}, {"blocks", double(blocks.size())}};
  return d;
}

}  // namespace

Architecture fast_neural_style_architecture() {
  return {"fast_neural_style", detect,
          [](const weights::StateDict& dict, const DetectedArch& d, const std::string& source) -> std::unique_ptr<ImageModel> {
            return std::make_unique<FastNeuralStyle>(dict, d, source);
          }};
}

}  // namespace framelift::models
