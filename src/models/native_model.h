#pragma once
// Shared pieces of the native (ATen) architectures: a weight reader that checks every shape, the
// convolution layers they are built from, and an ImageModel base that handles grad mode, input
// checks, device and precision, so each architecture file only describes its network.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "infer/image_model.h"
#include "models/architecture.h"
#include "weights/state_dict.h"

namespace framelift::models {

// Hands out the tensors of a state dict as float32, each checked against the shape the network
// expects. Problems are Error(Model) "<source>: tensor <key> ...", so a truncated or mislabelled
// file fails at load with the key at fault, not later inside a convolution.
class WeightReader {
 public:
  WeightReader(const weights::StateDict& dict, std::string source);

  bool has(const std::string& key) const { return dict_.count(key) != 0; }
  // shape entries of -1 accept any size on that axis.
  at::Tensor tensor(const std::string& key, const std::vector<int64_t>& shape);
  // A stored buffer the network recomputes from its sizes (an index table, a mask for the training
  // crop): checked for its shape, of any dtype, and counted as read.
  void recomputed(const std::string& key, const std::vector<int64_t>& shape);
  // Throws when the dict holds tensors the network did not read: the detection was wrong, or the
  // file is a variant we would silently run without some of its weights.
  void expect_all_used() const;
  const std::string& source() const { return source_; }

 private:
  const at::Tensor& checked(const std::string& key, const std::vector<int64_t>& shape);

  const weights::StateDict& dict_;
  std::string source_;
  std::set<std::string> used_;
};

// Runs in the memory format infer/conv_layout.h chooses for its shape on this CPU.
struct Conv2d {
  at::Tensor weight, bias;  // [out, in / groups, k, k], [out] (bias may be undefined)
  int64_t stride = 1, padding = 0, groups = 1;
  at::Tensor operator()(const at::Tensor& x) const;
};

struct ConvTranspose2d {
  at::Tensor weight, bias;  // [in, out, k, k], [out]
  int64_t stride = 1, padding = 0;
  at::Tensor operator()(const at::Tensor& x) const;
};

// "<prefix>.weight" [out, in, k, k] and "<prefix>.bias" [out]; padding defaults to "same".
Conv2d read_conv(WeightReader& r, const std::string& prefix, int64_t in, int64_t out, int64_t k,
                 int64_t stride = 1, int64_t padding = -1, bool bias = true);
// An inference-mode nn.BatchNorm2d ("<prefix>.weight", bias, running_mean, running_var; eps
// 1e-5; a num_batches_tracked is accepted) as y = scale x + shift per channel: for a norm that
// cannot fold into one convolution (a ReLU before it, or a sum of two convolutions: fold `scale`
// into each and `shift` into one).
struct BatchNorm2d {
  at::Tensor scale, shift;  // [C]
  at::Tensor operator()(const at::Tensor& x) const;
};
BatchNorm2d read_batch_norm(WeightReader& r, const std::string& prefix, int64_t channels);
// A convolution followed by an inference-mode nn.BatchNorm2d ("<bn>.weight", bias, running_mean,
// running_var; eps 1e-5), folded into the convolution's weights: one op where upstream runs two.
Conv2d read_conv_batch_norm(WeightReader& r, const std::string& conv, const std::string& bn, int64_t in, int64_t out, int64_t k);
ConvTranspose2d read_deconv(WeightReader& r, const std::string& prefix, int64_t in, int64_t out, int64_t k,
                            int64_t stride, int64_t padding, bool bias = true);

// The RGB mean of DIV2K that SwinIR-lineage networks subtract from their input ([1, 3, 1, 1] in
// x's dtype and device; zeros [1, 1, 1, 1] for other channel counts, as upstream does).
at::Tensor div2k_mean(const at::Tensor& x, int64_t channels);

// Nearest-neighbour upscaling by an integer factor (F.interpolate(mode="nearest")).
at::Tensor upsample_nearest(const at::Tensor& x, int64_t factor);

using TensorVisitor = std::function<void(at::Tensor&)>;
void visit(Conv2d& conv, const TensorVisitor& f);
void visit(ConvTranspose2d& conv, const TensorVisitor& f);

// What a detected network tells the runner and the tiler: scale and channels from detection,
// size multiple and tile overlap from its architecture's declaration (src/arch/), the same
// numbers the planner prices tiles with.
ModelInfo declared_info(const DetectedArch& detected);

class NativeModel : public ImageModel {
 public:
  const ModelInfo& info() const override { return info_; }
  // Checks the input ([N, in_channels, H, W], H and W multiples of size_multiple), runs the network
  // without autograd in the model's device and precision, returns the input's dtype.
  at::Tensor forward(const at::Tensor& input) final;
  void to(c10::Device device, c10::ScalarType dtype) final;

 protected:
  NativeModel(ModelInfo info, std::string source) : info_(std::move(info)), source_(std::move(source)) {}
  virtual at::Tensor run(const at::Tensor& x) = 0;
  // Every weight tensor the network holds, so that to() can convert them in place.
  virtual void visit_weights(const TensorVisitor& f) = 0;

  ModelInfo info_;
  std::string source_;

 private:
  c10::Device device_ = c10::kCPU;
  c10::ScalarType dtype_ = at::kFloat;
};

}  // namespace framelift::models
